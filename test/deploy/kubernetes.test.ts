import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ConfigMap, PersistentVolumeClaim, Service, ServiceAccount } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import {
  PrometheusRule,
  ServiceMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { PrometheusAgent } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1alpha1';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/index.js';
import { DASHBOARDS_DIR, REPO_ROOT, RULES_FILE } from '../../scripts/deploy/render.js';
import { KUBERNETES_DIR, build, find, type K8sObject } from './manifests.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { bytesOf } from '../support/memory-size.js';

const BASE = path.join(KUBERNETES_DIR, 'base');
const PRODUCTION = path.join(KUBERNETES_DIR, 'overlays/production');
const LOCATION = path.join(KUBERNETES_DIR, 'overlays/location-eu-west');
const KUSTOMIZATIONS = { base: BASE, 'overlays/production': PRODUCTION };

/** The schema model for every kind the manifests may contain; anything else fails the test. */
const MODELS: Record<string, new (o: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
  'v1/ServiceAccount': ServiceAccount,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'monitoring.coreos.com/v1alpha1/PrometheusAgent': PrometheusAgent,
};

/** Validates every object against the schema model of its kind; a kind without one fails. */
function expectValid(objects: K8sObject[]): void {
  for (const o of objects) {
    const Model = MODELS[`${o.apiVersion}/${o.kind}`];
    expect(Model, `no schema model for ${o.apiVersion} ${o.kind}`).toBeDefined();
    expect(() => new Model!(o as never).validate(), `${o.kind}/${o.metadata.name}`).not.toThrow();
  }
}

/**
 * The field names a Prometheus Operator type declares, from its model's type declarations: the
 * CRD schemas accept unknown fields (the API server drops them), so a misspelt field would pass
 * validation and do nothing.
 */
function declaredFields(...declarations: string[]): Set<string> {
  // The package exports its modules for import only; its type declarations are read as files.
  const group = path.join(
    REPO_ROOT,
    'node_modules/@kubernetes-models/prometheus-operator/monitoring.coreos.com',
  );
  const fields = new Set<string>();
  for (const d of declarations) {
    const text = readFileSync(path.join(group, `${d}.d.ts`), 'utf8');
    for (const m of text.matchAll(/^\s+"([A-Za-z]+)"\??:/gm)) fields.add(m[1]!);
  }
  return fields;
}

interface Container {
  name: string;
  args?: string[];
  ports?: Array<{ name?: string; containerPort: number }>;
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
}
interface Volume {
  name: string;
  configMap?: { name: string; items?: Array<{ key: string; path: string }> };
  secret?: { secretName: string; items?: Array<{ key: string; path: string }> };
  persistentVolumeClaim?: { claimName: string };
  emptyDir?: object;
}
interface DeploymentShape extends K8sObject {
  spec: {
    replicas: number;
    strategy: { type: string };
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        terminationGracePeriodSeconds: number;
        securityContext: Record<string, unknown>;
        containers: Container[];
        volumes: Volume[];
      };
    };
  };
}
interface ConfigMapShape extends K8sObject {
  data: Record<string, string>;
}

function deploymentOf(objects: K8sObject[]): DeploymentShape {
  return find<DeploymentShape>(objects, 'Deployment', 'isa-monitor');
}
function container(d: DeploymentShape): Container {
  const c = d.spec.template.spec.containers.find((x) => x.name === 'isa-monitor');
  if (!c) throw new Error('no isa-monitor container');
  return c;
}
function mountOf(d: DeploymentShape, volume: string): string {
  const m = container(d).volumeMounts?.find((x) => x.name === volume);
  if (!m) throw new Error(`volume ${volume} is not mounted`);
  return m.mountPath;
}

/** The monitor's configuration as the pod sees it: files resolved through the volumes. */
function loadMountedConfig(objects: K8sObject[]) {
  const d = deploymentOf(objects);
  const args = container(d).args ?? [];
  const configFile = args[args.indexOf('--config') + 1] ?? '';
  const files = new Map<string, string>();
  for (const v of d.spec.template.spec.volumes) {
    if (v.configMap) {
      const cm = find<ConfigMapShape>(objects, 'ConfigMap', v.configMap.name);
      for (const item of v.configMap.items ?? []) {
        const data = cm.data[item.key];
        if (data !== undefined) files.set(path.posix.join(mountOf(d, v.name), item.path), data);
      }
    }
    if (v.secret) {
      // The Secret is created outside of git: stand in a key for every item the pod mounts.
      for (const item of v.secret.items ?? []) {
        files.set(path.posix.join(mountOf(d, v.name), item.path), `key-${item.key}`);
      }
    }
  }
  return loadConfig({
    checks: CHECK_LIST,
    configFile,
    env: {},
    cwd: '/var/lib/isa-monitor',
    readFile: (p) => {
      const text = files.get(p);
      if (text === undefined) throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' });
      return text;
    },
  });
}

describe.each(Object.entries(KUSTOMIZATIONS))('kustomization %s', (_name, dir) => {
  const objects = build(dir);

  it('validates every object against the Kubernetes and Prometheus Operator schemas', () => {
    expect(objects.length).toBeGreaterThanOrEqual(7);
    expectValid(objects);
  });

  it('mounts only ConfigMap keys that exist, and a configuration the monitor accepts', () => {
    const d = deploymentOf(objects);
    for (const v of d.spec.template.spec.volumes) {
      if (!v.configMap) continue;
      const cm = find<ConfigMapShape>(objects, 'ConfigMap', v.configMap.name);
      expect(v.configMap.items?.length, `volume ${v.name} names its keys`).toBeGreaterThan(0);
      for (const item of v.configMap.items ?? []) {
        expect(Object.keys(cm.data), `ConfigMap ${cm.metadata.name}`).toContain(item.key);
      }
    }
    const loaded = loadMountedConfig(objects);
    expect(loaded.ok ? [] : loaded.problems).toEqual([]);
    if (!loaded.ok) return;
    // Each key comes from the mounted Secret, the ledger lives on the claim.
    expect(loaded.config.stateFile.startsWith(`${mountOf(d, 'ledger')}/`)).toBe(true);
    expect(loaded.config.listen.port).toBe(container(d).ports?.[0]?.containerPort);
    // Room for the graceful stop, and for the HTTP server and process to exit after it.
    expect(d.spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThanOrEqual(
      loaded.config.shutdownTimeoutMs + 10_000,
    );
  });

  it('runs one replica, replaced with Recreate, probed on /healthz and /readyz', () => {
    const d = deploymentOf(objects);
    expect(d.spec.replicas).toBe(1);
    expect(d.spec.strategy.type).toBe('Recreate');
    const c = container(d);
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http-metrics' });
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http-metrics' });
    expect(c.ports?.map((p) => p.name)).toContain('http-metrics');
  });

  it('runs as non-root with a read-only root, no capabilities and the runtime seccomp profile', () => {
    const d = deploymentOf(objects);
    const pod = d.spec.template.spec.securityContext;
    expect(pod['runAsNonRoot']).toBe(true);
    expect(pod['runAsUser']).not.toBe(0);
    expect(pod['seccompProfile']).toEqual({ type: 'RuntimeDefault' });
    const c = container(d).securityContext ?? {};
    expect(c['readOnlyRootFilesystem']).toBe(true);
    expect(c['allowPrivilegeEscalation']).toBe(false);
    expect(c['capabilities']).toEqual({ drop: ['ALL'] });
    // The only writable place is the ledger's claim.
    const writable = container(d).volumeMounts?.filter((m) => !m.readOnly) ?? [];
    expect(writable.map((m) => m.name)).toEqual(['ledger']);
    const ledger = d.spec.template.spec.volumes.find((v) => v.name === 'ledger');
    find(objects, 'PersistentVolumeClaim', ledger?.persistentVolumeClaim?.claimName);
  });

  it('requests no more than it limits', () => {
    const r = container(deploymentOf(objects)).resources;
    expect(r?.requests?.['cpu']).toBeDefined();
    expect(bytesOf(r?.requests?.['memory'] ?? '')).toBeLessThanOrEqual(
      bytesOf(r?.limits?.['memory'] ?? ''),
    );
  });

  it('connects Service, ServiceMonitor and pod by labels and port name, as job isa-monitor', () => {
    const d = deploymentOf(objects);
    const service = find<
      K8sObject & {
        spec: {
          selector: Record<string, string>;
          ports: Array<{ name: string; targetPort: string }>;
        };
      }
    >(objects, 'Service');
    // The Operator names the job after the Service; the shipped rules select job="isa-monitor".
    expect(service.metadata.name).toBe('isa-monitor');
    expect(d.spec.template.metadata.labels).toMatchObject(service.spec.selector);
    expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
    const portNames = container(d).ports?.map((p) => p.name);
    for (const p of service.spec.ports) expect(portNames).toContain(p.targetPort);
    const sm = find<
      K8sObject & {
        spec: {
          jobLabel?: string;
          selector: { matchLabels: Record<string, string> };
          endpoints: Array<{ port: string; interval: string }>;
        };
      }
    >(objects, 'ServiceMonitor');
    expect(sm.spec.jobLabel).toBeUndefined();
    expect(service.metadata.labels).toMatchObject(sm.spec.selector.matchLabels);
    for (const e of sm.spec.endpoints) {
      expect(service.spec.ports.map((p) => p.name)).toContain(e.port);
      // The rules' timings are measured at a 15 s interval (docs/alerts.md).
      expect(e.interval).toBe('15s');
    }
  });

  it('carries exactly the shipped rule groups in its PrometheusRule', () => {
    const rule = find<K8sObject & { spec: { groups: unknown } }>(objects, 'PrometheusRule');
    const shipped = parse(readFileSync(RULES_FILE, 'utf8')) as { groups: unknown };
    expect(rule.spec.groups).toEqual(shipped.groups);
  });

  it("carries every dashboard in a ConfigMap labelled for Grafana's sidecar", () => {
    const cm = find<ConfigMapShape>(objects, 'ConfigMap', 'isa-monitor-dashboards');
    expect(cm.metadata.labels?.['grafana_dashboard']).toBe('1');
    const dashboards = readdirSync(DASHBOARDS_DIR)
      .filter((f) => f.endsWith('.json'))
      .sort();
    expect(Object.keys(cm.data).sort()).toEqual(dashboards);
    for (const f of dashboards) {
      expect(JSON.parse(cm.data[f] ?? '')).toEqual(
        JSON.parse(readFileSync(path.join(DASHBOARDS_DIR, f), 'utf8')),
      );
    }
    // A ConfigMap holds at most 1 MiB.
    expect(Buffer.byteLength(JSON.stringify(cm.data))).toBeLessThan(2 ** 20);
  });
});

describe('the production overlay', () => {
  const objects = build(PRODUCTION);

  it('sets the namespace, the image and the label a kube-prometheus-stack Prometheus selects', () => {
    for (const o of objects)
      expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe('monitoring');
    expect(container(deploymentOf(objects)).args).toBeDefined();
    const image = (
      deploymentOf(objects).spec.template.spec.containers[0] as unknown as { image: string }
    ).image;
    expect(image).toBe('registry.example.com/isa-monitor:0.1.0');
    for (const kind of ['ServiceMonitor', 'PrometheusRule']) {
      expect(find(objects, kind).metadata.labels?.['release']).toBe('kube-prometheus-stack');
    }
  });
});

describe('the plain-Prometheus scrape example', () => {
  const file = path.join(KUBERNETES_DIR, 'plain-prometheus/prometheus.yml');
  const config = parse(readFileSync(file, 'utf8')) as {
    rule_files: string[];
    scrape_configs: Array<{
      job_name: string;
      scrape_interval: string;
      relabel_configs: Array<{ source_labels?: string[]; regex?: string; action?: string }>;
    }>;
  };
  const service = find<K8sObject & { spec: { ports: Array<{ name: string }> } }>(
    build(BASE),
    'Service',
  );

  it('keeps only the isa-monitor Service metrics port, as job isa-monitor', () => {
    // Debian's promtool 2.42 is built without Kubernetes service discovery, so
    // `promtool check config` cannot read this file here; these checks stand in for it.
    const [job] = config.scrape_configs;
    expect(job?.job_name).toBe('isa-monitor');
    expect(job?.scrape_interval).toBe('15s');
    const keeps = job?.relabel_configs.filter((r) => r.action === 'keep') ?? [];
    const byLabel = Object.fromEntries(
      keeps.map((r) => [r.source_labels?.[0], new RegExp(`^(?:${r.regex})$`)]),
    );
    expect(
      byLabel['__meta_kubernetes_service_label_app_kubernetes_io_name']?.test(
        service.metadata.labels?.['app.kubernetes.io/name'] ?? '',
      ),
    ).toBe(true);
    expect(
      byLabel['__meta_kubernetes_endpoint_port_name']?.test(service.spec.ports[0]?.name ?? ''),
    ).toBe(true);
  });

  it('loads the shipped rules file', () => {
    expect(config.rule_files.map((f) => path.resolve(path.dirname(file), f))).toEqual([RULES_FILE]);
  });
});

describe('the per-location overlay (many locations, remote write)', () => {
  const objects = build(LOCATION);
  const production = build(PRODUCTION);
  interface AgentShape extends K8sObject {
    spec: Record<string, unknown> & {
      replicas: number;
      serviceAccountName: string;
      scrapeInterval: string;
      serviceMonitorSelector: { matchLabels: Record<string, string> };
      externalLabels: Record<string, string>;
      prometheusExternalLabelName: string;
      replicaExternalLabelName: string;
      remoteWrite: Array<
        Record<string, unknown> & { url: string; queueConfig: Record<string, string> }
      >;
    };
  }
  const agent = find<AgentShape>(objects, 'PrometheusAgent');

  it('validates every object, the PrometheusAgent against its Operator schema and field names', () => {
    expectValid(objects);
    const specFields = declaredFields('v1alpha1/PrometheusAgentSpec', 'v1/CommonPrometheusFields');
    for (const key of Object.keys(agent.spec)) expect(specFields, `spec.${key}`).toContain(key);
    const writeFields = declaredFields('v1/RemoteWriteSpec');
    const queueFields = declaredFields('v1/QueueConfig');
    for (const write of agent.spec.remoteWrite) {
      for (const key of Object.keys(write))
        expect(writeFields, `remoteWrite.${key}`).toContain(key);
      for (const key of Object.keys(write.queueConfig))
        expect(queueFields, `queueConfig.${key}`).toContain(key);
    }
  });

  it('keeps the production monitor as it is, with no rules: the centre evaluates them', () => {
    expect(objects.filter((o) => o.kind === 'PrometheusRule')).toEqual([]);
    for (const o of production.filter((p) => p.kind !== 'PrometheusRule'))
      expect(find(objects, o.kind, o.metadata.name), `${o.kind}/${o.metadata.name}`).toEqual(o);
    for (const o of objects)
      expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe('monitoring');
  });

  it('names the location in one place, the agent, and scrapes the monitor as job isa-monitor', () => {
    expect(agent.spec.externalLabels['location']).toMatch(/^[a-z0-9-]+$/);
    // The monitor's own config leaves `location` unset: the agent's label is the only one.
    const loaded = loadMountedConfig(objects);
    expect(loaded.ok ? loaded.config.location : loaded.problems).toBeFalsy();
    // No labels the Operator would add that are the same in every location's cluster.
    expect(agent.spec.prometheusExternalLabelName).toBe('');
    expect(agent.spec.replicaExternalLabelName).toBe('');
    expect(agent.spec.replicas).toBe(1);
    // It selects the ServiceMonitor (same namespace), which scrapes the Service named isa-monitor.
    const sm = find(objects, 'ServiceMonitor');
    expect(sm.metadata.labels).toMatchObject(agent.spec.serviceMonitorSelector.matchLabels);
    expect(agent.spec.scrapeInterval).toBe('15s');
    find(objects, 'Service', 'isa-monitor');
  });

  it('lets the agent list endpoints through its own service account', () => {
    find(objects, 'ServiceAccount', agent.spec.serviceAccountName);
    const binding = find<
      K8sObject & {
        roleRef: { kind: string; name: string };
        subjects: Array<{ kind: string; name: string; namespace: string }>;
      }
    >(objects, 'RoleBinding');
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: agent.spec.serviceAccountName, namespace: 'monitoring' },
    ]);
    const role = find<K8sObject & { rules: Array<{ resources: string[]; verbs: string[] }> }>(
      objects,
      'Role',
      binding.roleRef.name,
    );
    const endpoints = role.rules.find((r) => r.resources.includes('endpoints'));
    expect(endpoints?.verbs).toEqual(expect.arrayContaining(['get', 'list', 'watch']));
  });

  it('remote-writes like the shipped agent configuration the end-to-end test runs', () => {
    const shipped = parse(
      readFileSync(path.join(REPO_ROOT, 'deploy/agent/prometheus.yml'), 'utf8'),
    ) as {
      remote_write: Array<{ queue_config: { batch_send_deadline: string } }>;
    };
    const [write] = agent.spec.remoteWrite;
    expect(new URL(write?.url ?? '').protocol).toBe('https:');
    expect(write?.queueConfig['batchSendDeadline']).toBe(
      shipped.remote_write[0]?.queue_config.batch_send_deadline,
    );
  });
});

describe('the overlay behind TLS and basic auth', () => {
  const WEB_TLS = path.join(KUBERNETES_DIR, 'overlays/web-tls');
  const objects = build(WEB_TLS);
  interface MonitorShape extends K8sObject {
    spec: { endpoints: Array<Record<string, unknown>> };
  }
  const monitor = find<MonitorShape>(objects, 'ServiceMonitor', 'isa-monitor');
  const deployment = find<{
    spec: {
      template: {
        spec: {
          containers: Array<
            Container & {
              env: Array<{ name: string; value?: string }>;
              livenessProbe: { exec: { command: string[] } };
              readinessProbe: { exec: { command: string[] } };
            }
          >;
          volumes: Volume[];
        };
      };
    };
  }>(objects, 'Deployment', 'isa-monitor');
  const container = deployment.spec.template.spec.containers[0]!;

  it('validates every object, the ServiceMonitor endpoint with Operator field names', () => {
    expectValid(objects);
    const endpoint = monitor.spec.endpoints[0]!;
    const fields = declaredFields('v1/Endpoint');
    for (const key of Object.keys(endpoint)) expect(fields, `endpoints[0].${key}`).toContain(key);
    expect(endpoint).toMatchObject({
      scheme: 'https',
      tlsConfig: { ca: { secret: { name: 'isa-monitor-tls', key: 'ca.crt' } } },
      basicAuth: {
        username: { name: 'isa-monitor-scrape-auth', key: 'username' },
        password: { name: 'isa-monitor-scrape-auth', key: 'password' },
      },
    });
  });

  it('runs with the web configuration, and probes with the healthcheck from mounted files', () => {
    const web = container.args?.[container.args.indexOf('--web.config.file') + 1] ?? '';
    const mounted = (file: string) =>
      container.volumeMounts?.find((m) => file.startsWith(`${m.mountPath}/`));
    expect(mounted(web)?.name).toBe('web-config');
    const example = parse(readFileSync(path.join(WEB_TLS, 'web.yml'), 'utf8')) as {
      tls_server_config: { cert_file: string; key_file: string };
    };
    expect(mounted(example.tls_server_config.cert_file)?.name).toBe('tls');
    expect(mounted(example.tls_server_config.key_file)?.name).toBe('tls');
    const passwordFile = container.env.find(
      (e) => e.name === 'ISA_MONITOR_HEALTHCHECK_PASSWORD_FILE',
    )?.value;
    expect(mounted(passwordFile ?? '')?.name).toBe('probe-auth');
    // Every variable the probes set is one the healthcheck reads.
    const healthcheck = readFileSync(path.join(REPO_ROOT, 'src/healthcheck.ts'), 'utf8');
    for (const { name } of container.env) expect(healthcheck).toContain(`'${name}'`);
    expect(container.livenessProbe.exec.command).toEqual(['node', '/app/dist/healthcheck.js']);
    expect(container.readinessProbe.exec.command.at(-1)).toBe('/readyz');
    const volumes = deployment.spec.template.spec.volumes.map((v) => v.name);
    for (const mount of container.volumeMounts ?? []) expect(volumes).toContain(mount.name);
  });
});
