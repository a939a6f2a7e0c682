/**
 * Reads deploy/kubernetes/ the way kustomize would, for the few features the shipped
 * kustomizations use (resources, namespace, images, strategic-merge patches of maps or with
 * `$patch: delete`, and JSON patches with `add`), so the tests can validate what
 * `kubectl apply -k` would send without a cluster or the kustomize binary.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { REPO_ROOT } from '../../scripts/deploy/render.js';

export const KUBERNETES_DIR = path.join(REPO_ROOT, 'deploy/kubernetes');

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

interface Kustomization {
  resources?: string[];
  namespace?: string;
  labels?: Array<{ pairs: Record<string, string> }>;
  images?: Array<{ name: string; newName?: string; newTag?: string }>;
  patches?: Array<{ path: string; target?: { group?: string; kind?: string; name?: string } }>;
}

/** Every YAML document of a file, as objects. */
export function readObjects(file: string): K8sObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as K8sObject);
}

export function readKustomization(dir: string): Kustomization {
  return parse(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')) as Kustomization;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Strategic merge for maps only: the shipped patches change no lists. */
function mergeMaps(base: unknown, patch: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) out[k] = k in base ? mergeMaps(base[k], v) : v;
  return out;
}

function applyJsonPatch(
  obj: K8sObject,
  ops: Array<{ op: string; path: string; value: unknown }>,
): K8sObject {
  const out = structuredClone(obj) as Record<string, unknown>;
  for (const { op, path: pointer, value } of ops) {
    if (op !== 'add') throw new Error(`JSON patch op ${op} is not supported by this reader`);
    const keys = pointer
      .split('/')
      .slice(1)
      .map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'));
    const last = keys.pop()!;
    let at: Record<string, unknown> = out;
    for (const k of keys) at = (at[k] ??= {}) as Record<string, unknown>;
    at[last] = value;
  }
  return out as K8sObject;
}

function matches(
  target: NonNullable<Kustomization['patches']>[number]['target'],
  obj: K8sObject,
): boolean {
  if (!target) return false;
  const group = obj.apiVersion.includes('/') ? obj.apiVersion.split('/')[0] : '';
  return (
    (target.group === undefined || target.group === group) &&
    (target.kind === undefined || new RegExp(`^${target.kind}$`).test(obj.kind)) &&
    (target.name === undefined || new RegExp(`^${target.name}$`).test(obj.metadata.name))
  );
}

/** The objects `kustomize build dir` would produce (for the features listed above). */
export function build(dir: string): K8sObject[] {
  const k = readKustomization(dir);
  let objects: K8sObject[] = [];
  for (const resource of k.resources ?? []) {
    const full = path.resolve(dir, resource);
    objects.push(...(resource.endsWith('.yaml') ? readObjects(full) : build(full)));
  }
  for (const patch of k.patches ?? []) {
    const docs = parse(readFileSync(path.join(dir, patch.path), 'utf8')) as unknown;
    if (Array.isArray(docs)) {
      const hits = objects.filter((o) => matches(patch.target, o));
      if (hits.length === 0) throw new Error(`patch ${patch.path} matches no object`);
      objects = objects.map((o) => (matches(patch.target, o) ? applyJsonPatch(o, docs) : o));
    } else {
      const p = docs as K8sObject;
      const i = objects.findIndex((o) => o.kind === p.kind && o.metadata.name === p.metadata.name);
      if (i < 0)
        throw new Error(`patch ${patch.path} matches no object (${p.kind}/${p.metadata.name})`);
      // A strategic-merge patch with `$patch: delete` removes the object.
      if (p['$patch'] === 'delete') objects.splice(i, 1);
      else objects[i] = mergeMaps(objects[i], p) as K8sObject;
    }
  }
  for (const pairs of k.labels ?? []) {
    objects = objects.map((o) => ({
      ...o,
      metadata: { ...o.metadata, labels: { ...o.metadata.labels, ...pairs.pairs } },
    }));
  }
  if (k.namespace)
    objects = objects.map((o) => ({ ...o, metadata: { ...o.metadata, namespace: k.namespace } }));
  for (const image of k.images ?? []) {
    for (const o of objects) {
      const containers = (
        o as { spec?: { template?: { spec?: { containers?: Array<{ image: string }> } } } }
      ).spec?.template?.spec?.containers;
      for (const c of containers ?? []) {
        if (c.image === image.name)
          c.image = `${image.newName ?? image.name}:${image.newTag ?? 'latest'}`;
      }
    }
  }
  return objects;
}

export function find<T = K8sObject>(objects: K8sObject[], kind: string, name?: string): T {
  const hit = objects.find(
    (o) => o.kind === kind && (name === undefined || o.metadata.name === name),
  );
  if (!hit) throw new Error(`no ${kind}${name ? `/${name}` : ''}`);
  return hit as T;
}
