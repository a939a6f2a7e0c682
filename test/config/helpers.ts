/** What the config-file tests of one environment share: the file around its lines, its problems. */
import { formatProblems, type LoadResult } from '../../src/config/index.js';

/** A file with one environment, production on https with the lifecycle off, plus `lines`. */
export function environment(...lines: string[]): string {
  return [
    'environments:',
    '  - name: production',
    '    base_url: https://api.example.invalid',
    '    lifecycle: { enabled: false }',
    ...lines.map((l) => `    ${l}`),
  ].join('\n');
}

/** The problems of a load that must fail, one line each as validate-config prints them. */
export function problems(result: LoadResult): string[] {
  if (result.ok) throw new Error('expected problems, got a valid config');
  return formatProblems(result.problems).split('\n');
}
