/**
 * The real monitoring stack on loopback for the end-to-end tests: Prometheus and Alertmanager from
 * Debian's packages and the shipped example configurations (free ports, temporary data
 * directories, killed by pid afterwards), the real rules scaled to a compressed clock, and a
 * webhook receiver that records every notification.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { parseDuration } from '../../scripts/rules/durations.js';
import { scaleRules } from '../../scripts/rules/scale-rules.js';

/** Fails with the command to run when a tool of the stack is missing (never skips). */
export function requireTool(name: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const path = found.stdout.trim();
  if (found.status !== 0 || path === '') {
    throw new Error(
      `${name} is not installed. Install the real tools first: ` +
        'apt-get install -y --no-install-recommends prometheus prometheus-alertmanager',
    );
  }
  return path;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  logFile: string;
  stop(): Promise<void>;
}

/** Starts a process with its output in `dir/<name>.log`; `stop()` kills it by pid and waits. */
export async function startProcess(
  name: string,
  command: string,
  args: string[],
  dir: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ManagedProcess> {
  await mkdir(dir, { recursive: true });
  const logFile = join(dir, `${name}.log`);
  const log = openSync(logFile, 'a');
  const child = spawn(command, args, { stdio: ['ignore', log, log], env });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    name,
    child,
    logFile,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Waits until `url` answers 200. */
export async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = '';
  while (performance.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return;
      last = `HTTP ${response.status}`;
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms (${last})`);
}

export interface Notification {
  /** Monotonic ms when it arrived. */
  at: number;
  receiver: string;
  status: string;
  /** The labels Alertmanager grouped by: one notification per distinct set. */
  groupLabels: Record<string, string>;
  alerts: Array<{
    status: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  }>;
}

export interface WebhookReceiver {
  url: string;
  notifications: Notification[];
  close(): Promise<void>;
}

/** An HTTP server that records every Alertmanager webhook notification, by path. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const notifications: Notification[] = [];
  const server: Server = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      try {
        const parsed = JSON.parse(body) as Omit<Notification, 'at' | 'receiver'>;
        notifications.push({
          at: performance.now(),
          receiver: (req.url ?? '/').replace(/^\//, ''),
          status: parsed.status,
          groupLabels: parsed.groupLabels,
          alerts: parsed.alerts,
        });
      } catch {
        // Not a notification; ignore.
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    notifications,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export async function writeText(path: string, text: string): Promise<string> {
  await writeFile(path, text);
  return path;
}

/** One instant-vector sample of a Prometheus query. */
export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

/** The `result` of a Prometheus query API answer; throws when Prometheus refuses the query. */
async function queryResult<T>(url: string, expr: string): Promise<T[]> {
  const body = (await (await fetch(url)).json()) as {
    status: string;
    error?: string;
    data: { result: T[] };
  };
  if (body.status !== 'success') throw new Error(`query failed: ${expr}: ${body.error}`);
  return body.data.result;
}

/** Runs an instant query; throws when Prometheus refuses it. */
export function queryPrometheus(prometheusUrl: string, expr: string): Promise<Sample[]> {
  return queryResult(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`, expr);
}

/** One series of a range query: its labels and its `[unix seconds, value]` points. */
export interface RangeSeries {
  metric: Record<string, string>;
  values: Array<[number, string]>;
}

/** Runs a range query (times in Unix ms); throws when Prometheus refuses it. */
export function queryPrometheusRange(
  prometheusUrl: string,
  expr: string,
  range: { startMs: number; endMs: number; stepMs: number },
): Promise<RangeSeries[]> {
  const params = new URLSearchParams({
    query: expr,
    start: String(range.startMs / 1000),
    end: String(range.endMs / 1000),
    step: String(range.stepMs / 1000),
  });
  return queryResult(`${prometheusUrl}/api/v1/query_range?${params}`, expr);
}

/** Which notifications to pick: every given field must match one alert of the notification. */
export interface AlertMatch {
  alertname: string;
  status: 'firing' | 'resolved';
  environment?: string;
  severity?: string;
  /** Only notifications that arrived at or after this monotonic time (ms). */
  since?: number;
}

/** The notifications received so far that carry an alert matching `match`, oldest first. */
export function notificationsMatching(
  receiver: WebhookReceiver,
  match: AlertMatch,
): Notification[] {
  return receiver.notifications.filter(
    (n) =>
      n.at >= (match.since ?? 0) &&
      n.alerts.some(
        (a) =>
          a.status === match.status &&
          a.labels['alertname'] === match.alertname &&
          (match.environment === undefined || a.labels['environment'] === match.environment) &&
          (match.severity === undefined || a.labels['severity'] === match.severity),
      ),
  );
}

/** A scrape target: a daemon's host:port and the target labels the scrape config gives it. */
export interface ScrapeTarget {
  host: string;
  labels?: Record<string, string>;
}

/** An alert as Alertmanager holds it (`GET /api/v2/alerts`), the fields the tests read. */
export interface HeldAlert {
  labels: Record<string, string>;
  status: { state: string };
}

export interface MonitoringStack {
  prometheusUrl: string;
  /** The remote-write endpoint, when started as the central store (`remoteWrite`). */
  remoteWriteUrl: string;
  receiver: WebhookReceiver;
  query(expr: string): Promise<Sample[]>;
  /** A range query, times in Unix ms. */
  queryRange(
    expr: string,
    range: { startMs: number; endMs: number; stepMs: number },
  ): Promise<RangeSeries[]>;
  /** The alerts Alertmanager holds now: what Prometheus sent it, before any notification. */
  alerts(): Promise<HeldAlert[]>;
  /** Stops Prometheus alone (an outage of the central store); its data stays. */
  stopPrometheus(): Promise<void>;
  /** Starts it again on the same port and data. */
  startPrometheus(): Promise<void>;
  /** Stops Prometheus, Alertmanager and the webhook receiver. */
  stop(): Promise<void>;
}

/**
 * Prometheus and Alertmanager from the shipped examples, on a clock compressed by `factor`
 * (real seconds per test second): the rules are a scaled copy of the real file (checked by
 * promtool like the original), Alertmanager's receivers all point at one webhook receiver and its
 * timers are scaled, Prometheus scrapes `targets` and evaluates at the scaled intervals. With
 * `remoteWrite`, Prometheus is the central store of docs/deploy.md, "Many locations": the shipped
 * deploy/central/prometheus.yml with the remote-write receiver, scraping nothing itself.
 */
export async function startMonitoringStack(options: {
  dir: string;
  factor: number;
  targets: ScrapeTarget[];
  remoteWrite?: boolean;
}): Promise<MonitoringStack> {
  const prometheus = requireTool('prometheus');
  const alertmanager = requireTool('prometheus-alertmanager');
  requireTool('promtool');
  const scaled = (realMs: number): string =>
    `${Math.max(1, Math.round(realMs / options.factor))}ms`;
  const receiver = await startWebhookReceiver();
  const processes: ManagedProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const p of processes.reverse()) await p.stop();
    await receiver.close();
  };
  try {
    const rulesPath = await writeText(
      join(options.dir, 'rules.yaml'),
      scaleRules(await readFile('alerts/isa-monitor.rules.yaml', 'utf8'), 1 / options.factor),
    );
    execFileSync('promtool', ['check', 'rules', rulesPath], { stdio: 'pipe' });

    const amPort = await freePort();
    const am = parse(await readFile('deploy/alertmanager/alertmanager.yml', 'utf8')) as Record<
      string,
      unknown
    >;
    const amPath = await writeText(
      join(options.dir, 'alertmanager.yml'),
      stringify(retargetAlertmanager(am, receiver.url, scaled)),
    );
    processes.push(
      await startProcess(
        'alertmanager',
        alertmanager,
        [
          `--config.file=${amPath}`,
          `--storage.path=${join(options.dir, 'am')}`,
          `--web.listen-address=127.0.0.1:${amPort}`,
          '--cluster.listen-address=',
        ],
        options.dir,
      ),
    );

    const promPort = await freePort();
    const prometheusUrl = `http://127.0.0.1:${promPort}`;
    const shipped = options.remoteWrite
      ? 'deploy/central/prometheus.yml'
      : 'deploy/prometheus/prometheus.yml';
    const prom = parse(await readFile(shipped, 'utf8')) as Record<string, unknown>;
    const promPath = await writeText(
      join(options.dir, 'prometheus.yml'),
      stringify(
        retargetPrometheus(prom, {
          targets: options.targets,
          rulesPath,
          amHost: `127.0.0.1:${amPort}`,
          scaled,
        }),
      ),
    );
    const promArgs = [
      `--config.file=${promPath}`,
      `--storage.tsdb.path=${join(options.dir, 'prom')}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
      `--rules.alert.resend-delay=${scaled(60_000)}`,
      // An agent that stops sends no staleness markers: its series end when the lookback
      // (5 minutes) runs out, which the compressed clock scales like every other window.
      ...(options.remoteWrite
        ? ['--web.enable-remote-write-receiver', `--query.lookback-delta=${scaled(300_000)}`]
        : []),
    ];
    // Prometheus stops first: it is last in `processes`, whose order stop() reverses.
    let central = await startProcess('prometheus', prometheus, promArgs, options.dir);
    processes.push({ ...central, stop: () => central.stop() });
    await waitForHttp(`http://127.0.0.1:${amPort}/-/ready`, 30_000);
    await waitForHttp(`${prometheusUrl}/-/ready`, 30_000);
    return {
      prometheusUrl,
      remoteWriteUrl: `${prometheusUrl}/api/v1/write`,
      receiver,
      query: (expr) => queryPrometheus(prometheusUrl, expr),
      queryRange: (expr, range) => queryPrometheusRange(prometheusUrl, expr, range),
      alerts: async () =>
        (await (await fetch(`http://127.0.0.1:${amPort}/api/v2/alerts`)).json()) as HeldAlert[],
      stopPrometheus: () => central.stop(),
      startPrometheus: async () => {
        central = await startProcess('prometheus', prometheus, promArgs, options.dir);
        await waitForHttp(`${prometheusUrl}/-/ready`, 30_000);
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Receivers → the test's webhook (same paths); group and repeat timers scaled. */
function retargetAlertmanager(
  config: Record<string, unknown>,
  receiverUrl: string,
  scaled: (realMs: number) => string,
): Record<string, unknown> {
  const scaleTimers = (route: Record<string, unknown>): void => {
    for (const key of ['group_wait', 'group_interval', 'repeat_interval']) {
      if (typeof route[key] === 'string') route[key] = scaled(parseDuration(route[key]));
    }
    for (const child of (route['routes'] as Array<Record<string, unknown>> | undefined) ?? [])
      scaleTimers(child);
  };
  scaleTimers(config['route'] as Record<string, unknown>);
  for (const receiverConfig of (config['receivers'] as Array<Record<string, unknown>>) ?? []) {
    for (const hook of (receiverConfig['webhook_configs'] as
      Array<Record<string, unknown>> | undefined) ?? []) {
      hook['url'] = `${receiverUrl}/${receiverConfig['name'] as string}`;
    }
  }
  return config;
}

/** The global scrape and evaluation intervals scaled to the compressed clock. */
function scaleGlobal(config: Record<string, unknown>, scaled: (realMs: number) => string): void {
  const global = (config['global'] ?? {}) as Record<string, unknown>;
  for (const key of ['scrape_interval', 'evaluation_interval', 'scrape_timeout']) {
    if (typeof global[key] === 'string') global[key] = scaled(parseDuration(global[key]));
  }
  config['global'] = global;
}

/** A shipped config's isa-monitor job, scraping `targets` at the global (scaled) interval. */
function isaMonitorJob(
  config: Record<string, unknown>,
  targets: ScrapeTarget[],
): Record<string, unknown> {
  const jobs = (config['scrape_configs'] ?? []) as Array<Record<string, unknown>>;
  const job = jobs.find((j) => j['job_name'] === 'isa-monitor');
  if (!job) throw new Error('the shipped Prometheus config has no isa-monitor job');
  delete job['scrape_interval'];
  delete job['scrape_timeout'];
  job['static_configs'] = targets.map((t) => ({
    targets: [t.host],
    ...(t.labels ? { labels: t.labels } : {}),
  }));
  return job;
}

/** The shipped isa-monitor job pointed at `targets`, these rules and this Alertmanager. */
function retargetPrometheus(
  config: Record<string, unknown>,
  options: {
    targets: ScrapeTarget[];
    rulesPath: string;
    amHost: string;
    scaled: (realMs: number) => string;
  },
): Record<string, unknown> {
  scaleGlobal(config, options.scaled);
  // The central store of many locations scrapes nothing: its series come by remote write.
  if (config['scrape_configs'] !== undefined || options.targets.length > 0)
    config['scrape_configs'] = [isaMonitorJob(config, options.targets)];
  config['rule_files'] = [options.rulesPath];
  config['alerting'] = { alertmanagers: [{ static_configs: [{ targets: [options.amHost] }] }] };
  return config;
}

export interface PrometheusAgent {
  url: string;
  /** Stops the agent (SIGTERM); its write-ahead log stays in its directory. */
  stop(): Promise<void>;
  /** Starts it again on the same port and write-ahead log. */
  start(): Promise<void>;
}

/**
 * A Prometheus in agent mode at one location, from the shipped deploy/agent/prometheus.yml: it
 * scrapes `target` as job isa-monitor at the scaled interval and remote-writes to
 * `remoteWriteUrl` with `location` as its external label, its send deadline scaled like every
 * other timer.
 */
export async function startPrometheusAgent(options: {
  dir: string;
  factor: number;
  location: string;
  target: ScrapeTarget;
  remoteWriteUrl: string;
}): Promise<PrometheusAgent> {
  const prometheus = requireTool('prometheus');
  const scaled = (realMs: number): string =>
    `${Math.max(1, Math.round(realMs / options.factor))}ms`;
  const config = parse(await readFile('deploy/agent/prometheus.yml', 'utf8')) as Record<
    string,
    unknown
  >;
  scaleGlobal(config, scaled);
  const global = config['global'] as Record<string, unknown>;
  global['external_labels'] = { ...(global['external_labels'] ?? {}), location: options.location };
  config['scrape_configs'] = [isaMonitorJob(config, [options.target])];
  const [write] = config['remote_write'] as Array<Record<string, unknown>>;
  if (!write) throw new Error('deploy/agent/prometheus.yml has no remote_write');
  write['url'] = options.remoteWriteUrl;
  const queue = (write['queue_config'] ?? {}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(queue)) {
    if (typeof value === 'string') queue[key] = scaled(parseDuration(value));
  }
  const name = `agent-${options.location}`;
  const configPath = await writeText(join(options.dir, `${name}.yml`), stringify(config));
  execFileSync('promtool', ['check', 'config', '--agent', configPath], { stdio: 'pipe' });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = [
    '--enable-feature=agent',
    `--config.file=${configPath}`,
    `--storage.agent.path=${join(options.dir, name)}`,
    `--web.listen-address=127.0.0.1:${port}`,
  ];
  let running: ManagedProcess | undefined;
  const start = async (): Promise<void> => {
    running = await startProcess(name, prometheus, args, options.dir);
    await waitForHttp(`${url}/-/ready`, 30_000);
  };
  await start();
  return {
    url,
    stop: async () => {
      await running?.stop();
    },
    start,
  };
}

interface RuleGroup {
  name: string;
  rules: Array<{ name: string; health: string; lastError?: string }>;
}

async function ruleGroups(prometheusUrl: string): Promise<RuleGroup[]> {
  const body = (await (await fetch(`${prometheusUrl}/api/v1/rules`)).json()) as {
    data: { groups: RuleGroup[] };
  };
  return body.data.groups;
}

/** The rules whose last evaluation failed: `group/name: lastError` for each. */
export async function unhealthyRules(prometheusUrl: string): Promise<string[]> {
  return (await ruleGroups(prometheusUrl)).flatMap((g) =>
    g.rules
      .filter((r) => r.health !== 'ok' || (r.lastError ?? '') !== '')
      .map((r) => `${g.name}/${r.name}: ${r.health} ${r.lastError ?? ''}`),
  );
}

/** How many rules Prometheus has loaded, in every group. */
export async function ruleCount(prometheusUrl: string): Promise<number> {
  return (await ruleGroups(prometheusUrl)).reduce((n, g) => n + g.rules.length, 0);
}
