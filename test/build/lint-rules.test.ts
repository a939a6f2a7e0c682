/**
 * The dependency rules hold the whole repository (docs/architecture.md, "Layers"): the lint's own
 * command (`npm run lint:dependencies`, run by `npm run lint`) passes on the repository as it is,
 * and refuses each kind of violation once a file that commits it is added to a copy: a cycle
 * between two folders that no file cycle shows, an import against the order of the generic
 * layers, and imports from dashboards/src and scripts/ that their rules refuse. The copy is made
 * in a temporary directory, so no violation is ever left in the tree.
 */
import { spawn } from 'node:child_process';
import { cp, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** What the lint cruises, what it follows into (bench/ reads test/ helpers) and its settings. */
const COPIED = ['src', 'dashboards/src', 'scripts', 'bench', 'web', 'test'];
const COPIED_FILES = ['package.json', 'tsconfig.json', '.dependency-cruiser.cjs'];
/** A cruise of the whole repository takes seconds alone, more on a busy machine. */
const CRUISE_TIMEOUT = 180_000;

interface LintRun {
  status: number | null;
  output: string;
  /** Each violation on one line: `rule: from → to` (a folder cycle lists its whole loop). */
  violations: string[];
}

/** The violations of dependency-cruiser's `err` report, one per `error` block. */
function violationsIn(output: string): string[] {
  return output
    .split(/^\s*error /m)
    .slice(1)
    .map((block) => block.split('\n\n')[0]!.replace(/\s+/g, ' ').trim());
}

/** A copy of what the lint reads, in a temporary directory of its own. */
async function copyOfRepository(): Promise<string> {
  const copy = await mkdtemp(path.join(tmpdir(), 'isa-lint-rules-'));
  for (const dir of COPIED) {
    await cp(path.join(ROOT, dir), path.join(copy, dir), { recursive: true });
  }
  for (const file of COPIED_FILES) await cp(path.join(ROOT, file), path.join(copy, file));
  await symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
  return copy;
}

/** Runs the lint's dependency command on a copy of the repository with `files` added. */
async function lintWith(files: Record<string, string>): Promise<LintRun> {
  const copy = await copyOfRepository();
  try {
    for (const [file, text] of Object.entries(files)) await writeFile(path.join(copy, file), text);
    const child = spawn('npm', ['run', '--silent', 'lint:dependencies'], { cwd: copy });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { status, output, violations: violationsIn(output).sort() };
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}

/** A module that imports `name` from `from` and uses it. */
function importing(name: string, from: string): string {
  return `import { ${name} } from '${from}';\nexport const seen = ${name};\n`;
}

// Each case cruises its own copy, so they run side by side.
describe.concurrent('npm run lint:dependencies', () => {
  it(
    'passes on the repository as it is',
    async () => {
      const run = await lintWith({});
      expect(run.violations, run.output).toEqual([]);
      expect(run.output).toContain('no dependency violations found');
      expect(run.status, run.output).toBe(0);
    },
    CRUISE_TIMEOUT,
  );

  it(
    'refuses a cycle between two folders of one layer, though no file cycle shows it',
    async () => {
      // sessions/ and metrics/ stand in one layer, so neither import goes against the order, and
      // each new file imports one that does not import it back.
      const run = await lintWith({
        'src/sessions/injected.ts': importing('UNIVERSAL_METRICS', '../metrics/definitions.js'),
        'src/metrics/injected.ts': importing('WRITE_RETRY_MS', '../sessions/ledger.js'),
      });
      expect(run.violations, run.output).toEqual([
        'no-folder-cycle: src/metrics → src/sessions → src/metrics',
        'no-folder-cycle: src/sessions → src/metrics → src/sessions',
      ]);
      expect(run.status).not.toBe(0);
    },
    CRUISE_TIMEOUT,
  );

  it(
    'refuses an import from api/ to limits/: a folder cycle, and against the layer order',
    async () => {
      const run = await lintWith({
        'src/api/injected.ts': importing('admit', '../limits/admission.js'),
      });
      expect(run.violations, run.output).toEqual([
        'layer-order-foundations: src/api/injected.ts → src/limits/admission.ts',
        'no-folder-cycle: src/api → src/limits → src/api',
        'no-folder-cycle: src/limits → src/api → src/limits',
      ]);
      expect(run.status).not.toBe(0);
    },
    CRUISE_TIMEOUT,
  );

  it(
    'refuses a file cycle between a folder and its subfolder, which the folder rule counts as one',
    async () => {
      const run = await lintWith({
        'src/simulator/injected.ts':
          "import { fromRoutes } from './routes/injected.js';\nexport const fromSimulator = fromRoutes;\n",
        'src/simulator/routes/injected.ts':
          "import { fromSimulator } from '../injected.js';\nexport const fromRoutes = () => fromSimulator;\n",
      });
      expect(run.violations, run.output).toEqual([
        'no-file-cycle-across-folders: src/simulator/injected.ts → src/simulator/routes/injected.ts → src/simulator/injected.ts',
      ]);
      expect(run.status).not.toBe(0);
    },
    CRUISE_TIMEOUT,
  );

  it(
    'refuses an import against the layer order that closes no cycle',
    async () => {
      // dashboard-kit/ stands among the foundations, below control/, and nothing control/ imports
      // leads back to it: the import breaks the order and closes no cycle.
      const run = await lintWith({
        'src/dashboard-kit/injected.ts': importing('probeOnce', '../control/probe.js'),
      });
      expect(run.violations, run.output).toEqual([
        'layer-order-foundations: src/dashboard-kit/injected.ts → src/control/probe.ts',
      ]);
      expect(run.status).not.toBe(0);
    },
    CRUISE_TIMEOUT,
  );

  it(
    'refuses a dashboard source that reads the runtime',
    async () => {
      const run = await lintWith({
        'dashboards/src/injected.ts': importing('MAX_STATUS_LIMIT', '../../src/server/status.js'),
      });
      expect(run.violations, run.output).toEqual([
        'dashboards-read-definitions: dashboards/src/injected.ts → src/server/status.ts',
      ]);
      expect(run.status).not.toBe(0);
    },
    CRUISE_TIMEOUT,
  );

  it(
    'refuses a generator that imports the daemon',
    async () => {
      const run = await lintWith({
        'scripts/injected.ts': importing('startDaemon', '../src/daemon.js'),
      });
      expect(run.violations, run.output).toEqual([
        'generators-start-nothing: scripts/injected.ts → src/daemon.ts',
      ]);
      expect(run.status).not.toBe(0);
    },
    CRUISE_TIMEOUT,
  );

  it(
    'refuses a check that imports dashboards/src: the cycle the dashboard kit removed',
    async () => {
      const run = await lintWith({
        'src/checks/ping/injected.ts': importing(
          'OVERVIEW_UID',
          '../../../dashboards/src/overview.js',
        ),
      });
      expect(run.violations, run.output).toEqual([
        'no-folder-cycle: dashboards/src → src/checks → dashboards/src',
        'no-folder-cycle: dashboards/src → src/checks/ping → dashboards/src',
        'no-folder-cycle: src/checks → dashboards/src → src/checks',
        'no-folder-cycle: src/checks/ping → dashboards/src → src/checks/ping',
        'src-is-the-product: src/checks/ping/injected.ts → dashboards/src/overview.ts',
      ]);
      expect(run.status).not.toBe(0);
    },
    CRUISE_TIMEOUT,
  );
});
