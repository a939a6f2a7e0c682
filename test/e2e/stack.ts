/**
 * The real monitoring stack on loopback for the end-to-end test: Prometheus and Alertmanager from
 * Debian's packages (free ports, temporary data directories, killed by pid afterwards), a webhook
 * receiver that records every notification, and the daemon itself from dist/.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';

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
