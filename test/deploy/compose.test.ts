/**
 * The compose quick start, checked without a container engine (no registry is reachable here,
 * so the Prometheus, Alertmanager and Grafana images cannot be pulled): the file parses, every
 * mounted file is a file of this repository, and the stack's ports and addresses agree with the
 * shipped Prometheus, Alertmanager and Grafana configurations it mounts unchanged.
 * scripts/image/test-image.sh builds its isa-monitor service with podman. The many-locations
 * file (locations.yaml) is checked the same way, and its agents' configurations against the
 * shipped deploy/agent/prometheus.yml and promtool.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { isDemoMode } from '../../src/config/index.js';
import { REPO_ROOT, RULES_FILE } from '../../scripts/deploy/render.js';
import { bytesOf } from '../support/memory-size.js';

const COMPOSE_DIR = path.join(REPO_ROOT, 'deploy/compose');

interface ComposeService {
  build?: { context: string; dockerfile?: string };
  image?: string;
  command?: string[];
  network_mode?: string;
  ports?: string[];
  extra_hosts?: string[];
  volumes?: string[];
  stop_grace_period?: string;
  environment?: Record<string, string>;
  mem_reservation?: string;
  mem_limit?: string;
}
interface Compose {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
}

/** A compose file of deploy/compose/ and the lookups the checks below make in it. */
function composeFile(file: string) {
  const compose = parse(readFileSync(path.join(COMPOSE_DIR, file), 'utf8')) as Compose;
  const service = (name: string): ComposeService => {
    const s = compose.services[name];
    if (!s) throw new Error(`no service ${name}`);
    return s;
  };
  /** Bind mounts of a service: container path → absolute host path. Named volumes are skipped. */
  const binds = (name: string): Map<string, string> => {
    const out = new Map<string, string>();
    for (const v of service(name).volumes ?? []) {
      const [source = '', target = ''] = v.split(':');
      if (source.startsWith('.') || source.startsWith('/'))
        out.set(target, path.resolve(COMPOSE_DIR, source));
    }
    return out;
  };
  /** The host file a path inside a service's container comes from, through its bind mounts. */
  const hostPathOf = (name: string, containerPath: string): string | undefined => {
    for (const [target, source] of binds(name)) {
      if (containerPath === target) return source;
      if (containerPath.startsWith(`${target}/`))
        return path.join(source, containerPath.slice(target.length + 1));
    }
    return undefined;
  };
  const flag = (name: string, option: string): string | undefined => {
    const arg = service(name).command?.find((a) => a.startsWith(`--${option}=`));
    return arg?.slice(option.length + 3);
  };
  return { compose, services: compose.services, service, binds, hostPathOf, flag };
}

/** Every bind mount is a file or directory of this repository; named volumes are declared. */
function expectMountsInRepository(file: ReturnType<typeof composeFile>): number {
  let count = 0;
  for (const name of Object.keys(file.services)) {
    for (const [target, source] of file.binds(name)) {
      count += 1;
      expect(existsSync(source), `${name}: ${source} (for ${target}) does not exist`).toBe(true);
      expect(
        source.startsWith(`${REPO_ROOT}/`),
        `${name}: ${source} is outside the repository`,
      ).toBe(true);
    }
    for (const v of file.service(name).volumes ?? []) {
      const source = v.split(':')[0] ?? '';
      if (!source.startsWith('.') && !source.startsWith('/'))
        expect(file.compose.volumes).toHaveProperty(source);
    }
  }
  return count;
}

const quickStart = composeFile('compose.yaml');
const { service, binds, hostPathOf, flag } = quickStart;

/** host:port → the port of a listen address such as `:9093` or `0.0.0.0:9464`. */
function portOf(address: string): number {
  return Number(address.slice(address.lastIndexOf(':') + 1));
}

const prometheusConfigPath = flag('prometheus', 'config.file') ?? '';
const prometheusConfigFile = hostPathOf('prometheus', prometheusConfigPath) ?? '';
const prometheusConfig = parse(readFileSync(prometheusConfigFile, 'utf8')) as {
  rule_files: string[];
  alerting: { alertmanagers: Array<{ static_configs: Array<{ targets: string[] }> }> };
  scrape_configs: Array<{ job_name: string; static_configs: Array<{ targets: string[] }> }>;
};
/** Which service listens on which port inside the shared network namespace. */
const listeners = new Map<number, string>([
  [
    portOf(
      service('isa-monitor').command?.[service('isa-monitor').command!.indexOf('--listen') + 1] ??
        '',
    ),
    'isa-monitor',
  ],
  [portOf(flag('prometheus', 'web.listen-address') ?? ''), 'prometheus'],
  [portOf(flag('alertmanager', 'web.listen-address') ?? ''), 'alertmanager'],
  [Number(service('grafana').environment?.['GF_SERVER_HTTP_PORT']), 'grafana'],
]);

describe('deploy/compose/compose.yaml', () => {
  it('mounts only files and directories of this repository, all of which exist', () => {
    expect(expectMountsInRepository(quickStart)).toBeGreaterThanOrEqual(6);
  });

  it('builds isa-monitor from the repository Dockerfile and runs it in demo mode by default', () => {
    const monitor = service('isa-monitor');
    expect(path.resolve(COMPOSE_DIR, monitor.build?.context ?? '')).toBe(REPO_ROOT);
    expect(existsSync(path.join(REPO_ROOT, monitor.build?.dockerfile ?? 'Dockerfile'))).toBe(true);
    const args = monitor.command ?? [];
    expect(args[0]).toBe('run');
    const configFile = args.includes('--config') ? args[args.indexOf('--config') + 1] : undefined;
    expect(isDemoMode({ configFile, env: monitor.environment ?? {} })).toBe(true);
    // Longer than the default shutdown_timeout (10 s), so a stop never cuts a session close.
    expect(monitor.stop_grace_period).toBe('15s');
    // Reachable from the other services and the published port, not only on the loopback.
    expect(args[args.indexOf('--listen') + 1]).toBe('0.0.0.0:9464');
  });

  it('runs the other services in the monitor network namespace and publishes every port there', () => {
    for (const name of ['prometheus', 'alertmanager', 'grafana']) {
      expect(service(name).network_mode, name).toBe('service:isa-monitor');
    }
    const published = (service('isa-monitor').ports ?? []).map((p) => Number(p.split(':').at(-1)));
    expect([...published].sort()).toEqual([...listeners.keys()].sort());
  });

  it('loads the shipped Prometheus config, whose targets are the stack services', () => {
    expect(prometheusConfigFile).toBe(path.join(REPO_ROOT, 'deploy/prometheus/prometheus.yml'));
    // rule_files resolve relative to the config file inside the container, onto the mounted rules.
    const rules = prometheusConfig.rule_files.map((f) =>
      hostPathOf('prometheus', path.posix.resolve(path.posix.dirname(prometheusConfigPath), f)),
    );
    expect(rules).toEqual([RULES_FILE]);
    const scrape = prometheusConfig.scrape_configs.find((j) => j.job_name === 'isa-monitor');
    const scrapeTargets = scrape?.static_configs.flatMap((s) => s.targets) ?? [];
    const alertTargets = prometheusConfig.alerting.alertmanagers.flatMap((a) =>
      a.static_configs.flatMap((s) => s.targets),
    );
    expect(scrapeTargets.map((t) => [t.split(':')[0], listeners.get(portOf(t))])).toEqual([
      ['127.0.0.1', 'isa-monitor'],
    ]);
    expect(alertTargets.map((t) => [t.split(':')[0], listeners.get(portOf(t))])).toEqual([
      ['127.0.0.1', 'alertmanager'],
    ]);
  });

  it('gives Alertmanager the shipped routing', () => {
    const file = hostPathOf('alertmanager', flag('alertmanager', 'config.file') ?? '');
    expect(file).toBe(path.join(REPO_ROOT, 'deploy/alertmanager/alertmanager.yml'));
  });

  it('provisions Grafana with the shipped data source and every shipped dashboard', () => {
    const provisioning = '/etc/grafana/provisioning';
    const datasources = [...binds('grafana').keys()].filter((t) =>
      t.startsWith(`${provisioning}/datasources/`),
    );
    expect(datasources).toHaveLength(1);
    const ds = parse(readFileSync(hostPathOf('grafana', datasources[0]!)!, 'utf8')) as {
      datasources: Array<{ type: string; url: string }>;
    };
    const url = new URL(ds.datasources[0]?.url ?? '');
    // The data source names `prometheus`, which the shared namespace maps to the loopback.
    expect(service('isa-monitor').extra_hosts).toContain(`${url.hostname}:127.0.0.1`);
    expect(listeners.get(Number(url.port))).toBe('prometheus');

    const providers = [...binds('grafana').keys()].filter((t) =>
      t.startsWith(`${provisioning}/dashboards/`),
    );
    expect(providers).toHaveLength(1);
    const provider = parse(readFileSync(hostPathOf('grafana', providers[0]!)!, 'utf8')) as {
      providers: Array<{ options: { path: string } }>;
    };
    const dir = hostPathOf('grafana', provider.providers[0]?.options.path ?? '');
    expect(dir).toBe(path.join(REPO_ROOT, 'dashboards'));
    expect(statSync(dir!).isDirectory()).toBe(true);
    expect(readdirSync(dir!).filter((f) => f.endsWith('.json')).length).toBeGreaterThan(0);
  });
});

describe('deploy/compose/locations.yaml', () => {
  const file = composeFile('locations.yaml');
  const agents = Object.keys(file.services).filter((n) => n.startsWith('agent-'));
  const AGENT_CONFIG = path.join(REPO_ROOT, 'deploy/agent/prometheus.yml');
  interface AgentConfig {
    global: { scrape_interval: string; external_labels: Record<string, string> };
    scrape_configs: Array<{ job_name: string; static_configs: Array<{ targets: string[] }> }>;
    remote_write: Array<{ url: string; queue_config?: Record<string, unknown> }>;
  }
  const agentConfigFile = (name: string): string =>
    file.hostPathOf(name, file.flag(name, 'config.file') ?? '') ?? '';
  const agentConfig = (name: string): AgentConfig =>
    parse(readFileSync(agentConfigFile(name), 'utf8')) as AgentConfig;
  const listenPort = (name: string): number => {
    const args = file.service(name).command ?? [];
    return portOf(args[args.indexOf('--listen') + 1] ?? '');
  };

  it('mounts only files and directories of this repository, all of which exist', () => {
    expect(expectMountsInRepository(file)).toBeGreaterThanOrEqual(5);
  });

  it('runs two locations, each a monitor in demo mode and an agent with its own write-ahead log', () => {
    expect(agents.sort()).toEqual(['agent-east', 'agent-west']);
    for (const agent of agents) {
      const monitor = `isa-monitor-${agent.slice('agent-'.length)}`;
      const m = file.service(monitor);
      expect(path.resolve(COMPOSE_DIR, m.build?.context ?? '')).toBe(REPO_ROOT);
      const args = m.command ?? [];
      expect(isDemoMode({ configFile: undefined, env: m.environment ?? {} })).toBe(true);
      expect(args.includes('--config')).toBe(false);
      expect(args[args.indexOf('--listen') + 1]).toBe('0.0.0.0:9464');
      expect(m.stop_grace_period).toBe('15s');
      expect(file.service(agent).command).toContain('--enable-feature=agent');
      // The WAL lives on a named volume of its own, so a restarted agent replays it.
      const wal = file.flag(agent, 'storage.agent.path') ?? '';
      const volume = (file.service(agent).volumes ?? []).find((v) => v.split(':')[1] === wal);
      expect(volume, `${agent}: ${wal} on a volume`).toBeDefined();
      expect(file.compose.volumes).toHaveProperty(volume!.split(':')[0]!);
    }
    const ledgers = ['isa-monitor-east', 'isa-monitor-west'].map((n) =>
      file.service(n).volumes?.find((v) => v.endsWith(':/var/lib/isa-monitor')),
    );
    expect(new Set(ledgers).size).toBe(2);
  });

  it("gives each agent the shipped agent config, with only its location, target and the centre's endpoint changed", () => {
    const shipped = parse(readFileSync(AGENT_CONFIG, 'utf8')) as AgentConfig;
    const locations = new Set<string>();
    for (const agent of agents) {
      const config = agentConfig(agent);
      const [job] = config.scrape_configs;
      const target = job?.static_configs[0]?.targets[0] ?? '';
      const location = config.global.external_labels['location'] ?? '';
      locations.add(location);
      // Its own location's monitor, on the port that monitor listens on.
      expect(target.split(':')[0]).toBe(`isa-monitor-${location}`);
      expect(portOf(target)).toBe(listenPort(`isa-monitor-${location}`));
      const url = new URL(config.remote_write[0]?.url ?? '');
      expect(url.hostname).toBe('prometheus');
      expect(url.pathname).toBe('/api/v1/write');
      expect(Number(url.port)).toBe(portOf(file.flag('prometheus', 'web.listen-address') ?? ''));
      const asShipped = structuredClone(config);
      asShipped.global.external_labels = shipped.global.external_labels;
      asShipped.scrape_configs = shipped.scrape_configs;
      asShipped.remote_write[0]!.url = shipped.remote_write[0]!.url;
      expect(asShipped, agent).toEqual(shipped);
      execFileSync('promtool', ['check', 'config', '--agent', agentConfigFile(agent)], {
        stdio: 'pipe',
      });
    }
    execFileSync('promtool', ['check', 'config', '--agent', AGENT_CONFIG], { stdio: 'pipe' });
    // Two locations, each its own `location`: the rules tell monitors apart by it (the instances
    // may be the same, docs/deploy.md "Locations may share an instance").
    expect(locations.size).toBe(agents.length);
  });

  it('runs the centre with the remote-write receiver, the shipped central config and rules', () => {
    expect(file.service('prometheus').command).toContain('--web.enable-remote-write-receiver');
    const configPath = file.flag('prometheus', 'config.file') ?? '';
    const configFile = file.hostPathOf('prometheus', configPath);
    expect(configFile).toBe(path.join(REPO_ROOT, 'deploy/central/prometheus.yml'));
    const config = parse(readFileSync(configFile!, 'utf8')) as {
      rule_files: string[];
      scrape_configs?: unknown[];
      alerting: { alertmanagers: Array<{ static_configs: Array<{ targets: string[] }> }> };
    };
    const rules = config.rule_files.map((f) =>
      file.hostPathOf('prometheus', path.posix.resolve(path.posix.dirname(configPath), f)),
    );
    expect(rules).toEqual([RULES_FILE]);
    execFileSync('promtool', ['check', 'config', configFile!], { stdio: 'pipe' });
    // Every series comes from the agents, with their location.
    expect(config.scrape_configs ?? []).toEqual([]);
    // Alertmanager shares the centre's network namespace, where the shipped config finds it.
    expect(file.service('alertmanager').network_mode).toBe('service:prometheus');
    const alertTargets = config.alerting.alertmanagers.flatMap((a) =>
      a.static_configs.flatMap((s) => s.targets),
    );
    expect(alertTargets).toEqual([
      `127.0.0.1:${portOf(file.flag('alertmanager', 'web.listen-address') ?? '')}`,
    ]);
    expect(file.hostPathOf('alertmanager', file.flag('alertmanager', 'config.file') ?? '')).toBe(
      path.join(REPO_ROOT, 'deploy/alertmanager/alertmanager.yml'),
    );
    const published = (file.service('prometheus').ports ?? []).map((p) =>
      Number(p.split(':').at(-1)),
    );
    expect(published.sort()).toEqual([9090, 9093]);
  });
});

describe('the memory every isa-monitor service is given', () => {
  const deployment = parse(
    readFileSync(path.join(REPO_ROOT, 'deploy/kubernetes/base/deployment.yaml'), 'utf8'),
  ) as {
    spec: { template: { spec: { containers: Array<{ name: string; resources: never }> } } };
  };
  const resources = deployment.spec.template.spec.containers[0]!.resources as {
    requests: { memory: string };
    limits: { memory: string };
  };

  it.each(['compose.yaml', 'locations.yaml'])(
    'is the Kubernetes Deployment’s request and limit in %s (docs/deploy.md, "Sizing")',
    (file) => {
      const { services } = composeFile(file);
      const monitors = Object.entries(services).filter(([name]) => name.startsWith('isa-monitor'));
      expect(monitors.length).toBeGreaterThan(0);
      for (const [name, service] of monitors) {
        expect(bytesOf(service.mem_reservation ?? ''), name).toBe(
          bytesOf(resources.requests.memory),
        );
        expect(bytesOf(service.mem_limit ?? ''), name).toBe(bytesOf(resources.limits.memory));
      }
    },
  );
});
