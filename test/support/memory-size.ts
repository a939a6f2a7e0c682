/**
 * Bytes of a memory size as the deployment files write it: a Kubernetes quantity (`128Mi`, `1Gi`,
 * plain bytes) or a compose size (`128m`, which compose reads in binary units too).
 */
export function bytesOf(size: string): number {
  const match = /^(\d+)(Ki|Mi|Gi|k|m|g)?$/.exec(size);
  if (!match) throw new Error(`unexpected memory size ${size}`);
  const power = { '': 0, Ki: 1, k: 1, Mi: 2, m: 2, Gi: 3, g: 3 }[match[2] ?? ''] ?? Number.NaN;
  return Number(match[1]) * 1024 ** power;
}
