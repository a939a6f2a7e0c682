/**
 * The daemon's footprint on Node 24, the image's runtime, beside blackbox_exporter: one command
 * for the figures docs/deploy.md's sizing and the Kubernetes requests and limits are read from.
 * It runs bench/blackbox.ts's modes one after the other, each in a window of its own, and prints
 * each mode's own report, then every goal with its figure:
 *
 *   idle     2 environments, nothing due: RSS at rest ≤ 70 MiB
 *   ping     2 environments pinged every 60 s, nothing else: CPU per scheduled ping, all
 *            threads, ≤ 1.5× blackbox_exporter's per probe at the same rate, same target
 *   default  2 environments at the default schedule: RSS steady ≤ 80 MiB, peak ≤ 90 MiB
 *   scale    1000 environments pinged every 60 s: start-up ≤ 2.0 s, steady RSS ≤ 200 MiB
 *
 * Usage:
 *   npm run build && npx tsx bench/footprint.ts [--baseline DIR] [--node PATH] [--quick]
 *
 * --baseline DIR  another build's dist/ beside this one in idle, ping and default (on the same
 *                 runtime), as `cp -r dist package.json node_modules/.cache/base` keeps one
 * --node PATH     the runtime (default: Node 24 from scripts/node24.sh, fetched once); the
 *                 machine's `node` gives the Node 20 figures
 * --quick         shorter windows (idle 60 s, ping 300 s, default 300 s, scale 60 s): a look,
 *                 not figures to quote
 *
 * About 45 minutes (the default mode waits up to 15 minutes for every check's first run), 15 with
 * --quick. Run it on a quiet machine: CPU figures of code that runs once a minute are small.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    node: { type: 'string' },
    quick: { type: 'boolean' },
  },
});
const node =
  values.node ??
  execFileSync('bash', [join(ROOT, 'scripts', 'node24.sh')], { encoding: 'utf8' }).trim();
const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
const tmp = mkdtempSync(join(tmpdir(), 'isa-footprint-'));

interface Mode {
  name: string;
  seconds: number;
  quickSeconds: number;
  withBaseline: boolean;
}

const MODES: Mode[] = [
  { name: 'idle', seconds: 180, quickSeconds: 60, withBaseline: true },
  { name: 'ping', seconds: 600, quickSeconds: 300, withBaseline: true },
  { name: 'default', seconds: 600, quickSeconds: 300, withBaseline: true },
  { name: 'scale', seconds: 180, quickSeconds: 60, withBaseline: false },
];

/** Runs one mode of bench/blackbox.ts, its report on stdout; its summary. */
async function run(mode: Mode): Promise<Record<string, unknown>> {
  const file = join(tmp, `${mode.name}.json`);
  const args = [
    '--import',
    'tsx',
    join(ROOT, 'bench', 'blackbox.ts'),
    '--mode',
    mode.name,
    '--seconds',
    String(values.quick ? mode.quickSeconds : mode.seconds),
    '--node',
    node,
    '--summary',
    file,
  ];
  if (mode.withBaseline && values.baseline !== undefined) {
    args.push('--baseline', values.baseline, '--baseline-node', node);
  }
  process.stdout.write(`\n== ${mode.name} (${new Date().toISOString()})\n`);
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`bench/blackbox.ts --mode ${mode.name} exited ${code}`);
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

interface Build {
  name: string;
  [figure: string]: unknown;
}

function goal(what: string, value: number, limit: number, unit: string): string[] {
  return [
    what,
    `${value.toFixed(unit === '×' ? 2 : 1)} ${unit}`,
    `≤ ${limit} ${unit}`,
    value <= limit ? 'yes' : 'NO',
  ];
}

function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const [i, row] of rows.entries()) {
    process.stdout.write(`| ${row.map((cell, j) => cell.padEnd(widths[j]!)).join(' | ')} |\n`);
    if (i === 0) process.stdout.write(`| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |\n`);
  }
}

const results: Record<string, Record<string, unknown>> = {};
for (const mode of MODES) results[mode.name] = await run(mode);

const idle = results['idle']!['idle'] as Build[];
const ping = results['ping']!['ping'] as Build[];
const fullDefault = results['default']!['default'] as {
  builds: Build[];
  blackboxCpuMsPerProbe: number;
};
const scale = results['scale']!['scale'] as {
  startupMs: number;
  rssSteadyMiB: number;
  environments: number;
};
const num = (b: Build | undefined, key: string): number => Number(b?.[key]);

process.stdout.write(
  `\n== goals: this build on Node.js ${version} (${node})${values.quick ? ', --quick' : ''}\n\n`,
);
printTable([
  ['goal', 'figure', 'limit', 'met'],
  goal('at rest, 2 environments: RSS steady', num(idle[0], 'rssSteadyMiB'), 70, 'MiB'),
  goal('default schedule: RSS steady', num(fullDefault.builds[0], 'rssSteadyMiB'), 80, 'MiB'),
  goal('default schedule: RSS peak', num(fullDefault.builds[0], 'rssPeakMiB'), 90, 'MiB'),
  goal(
    'CPU per scheduled ping ÷ blackbox_exporter per probe',
    num(ping[0], 'ratioToBlackbox'),
    1.5,
    '×',
  ),
  goal(`${scale.environments} environments: start-up`, scale.startupMs / 1000, 2, 's'),
  goal(`${scale.environments} environments: RSS steady`, scale.rssSteadyMiB, 200, 'MiB'),
]);
process.stdout.write('\n');
const columns = [...idle.map((b) => b.name)];
printTable([
  ['figure', ...columns],
  [
    'at rest: RSS steady / peak, MiB',
    ...idle.map((b) => `${num(b, 'rssSteadyMiB').toFixed(1)} / ${num(b, 'rssPeakMiB').toFixed(1)}`),
  ],
  ['at rest: CPU, ms per second', ...idle.map((b) => num(b, 'cpuMsPerSecond').toFixed(2))],
  [
    'ping every 60 s: CPU per ping (probe), ms',
    ...ping.map((b) => num(b, 'cpuMsPerPing').toFixed(2)),
  ],
  [
    'default schedule: RSS steady / peak, MiB',
    ...fullDefault.builds.map(
      (b) => `${num(b, 'rssSteadyMiB').toFixed(1)} / ${num(b, 'rssPeakMiB').toFixed(1)}`,
    ),
    '',
  ],
  [
    'default schedule: CPU per check run (probe), ms',
    ...fullDefault.builds.map((b) => num(b, 'cpuMsPerRun').toFixed(2)),
    fullDefault.blackboxCpuMsPerProbe.toFixed(2),
  ],
]);
