/**
 * Config inputs that tried to hang the process (finding 5 of the "close every session" issue):
 * `api_key_file` naming `/dev/zero` or a FIFO made `validate-config` and `run` block forever, and
 * a key file the process may not read was reported valid. Each case runs the real command line
 * and must end, with exit 2 and a clear message, well within its time limit.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MAX_CONFIG_FILE_BYTES } from '../../src/config/files.js';
import { runCli } from '../support/cli.js';

/**
 * The unprivileged run needs an ordinary user to reach the checkout and the Node binary: every
 * directory above them must be searchable by others (a checkout inside a mode-700 directory such
 * as `mktemp -d`'s is not, and there the case cannot be run as another user at all).
 */
const REPO = fileURLToPath(new URL('../..', import.meta.url));
function othersCanReach(path: string): boolean {
  for (let p = dirname(path); ; p = dirname(p)) {
    if ((statSync(p).mode & 0o001) === 0) return false;
    if (p === dirname(p)) return true;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'isa-chaos-config-'));
chmodSync(dir, 0o755);
const fifo = join(dir, 'key.fifo');
execFileSync('mkfifo', [fifo]);
const unreadable = join(dir, 'unreadable-key');
writeFileSync(unreadable, 'a-real-looking-key-0123456789\n', { mode: 0o000 });
const huge = join(dir, 'huge-key');
writeFileSync(huge, 'x'.repeat(MAX_CONFIG_FILE_BYTES + 10));

function configWithKeyFile(keyFile: string): string {
  const path = join(dir, `config-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(
    path,
    [
      'environments:',
      '  - name: production',
      '    base_url: http://127.0.0.1:9',
      `    api_key_file: ${keyFile}`,
      '    lifecycle: { enabled: false }',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  return path;
}

// Bounded per case: a hang is a failure, not a stuck suite.
const LIMIT_MS = 20_000;

describe('config inputs that try to hang the process', () => {
  it.each([
    ['a FIFO', fifo, 'not a regular file'],
    ['/dev/zero', '/dev/zero', 'not a regular file'],
    ['/dev/stdin', '/dev/stdin', 'not a regular file'],
    ['a directory', dir, 'is a directory'],
    ['a file beyond the size limit', huge, 'larger than the size limit'],
  ])('api_key_file naming %s is a config error, at once', async (_what, keyFile, reason) => {
    const config = configWithKeyFile(keyFile);
    for (const command of [['validate-config'], ['run']]) {
      const result = await runCli([...command, '--config', config], { timeoutMs: LIMIT_MS });
      expect(result.code, `${command[0]} ${keyFile}`).toBe(2);
      expect(result.stderr + result.stdout).toContain(reason);
      expect(result.stderr + result.stdout).toContain(keyFile);
    }
  });

  it('a config file that is a FIFO or a device is a config error, at once', async () => {
    for (const config of [fifo, '/dev/zero']) {
      const result = await runCli(['validate-config', '--config', config], { timeoutMs: LIMIT_MS });
      expect(result.code, config).toBe(2);
      expect(result.stderr + result.stdout).toContain('not a regular file');
    }
  });

  it.runIf(
    process.getuid?.() === 0 &&
      othersCanReach(join(REPO, 'dist', 'cli.js')) &&
      othersCanReach(process.execPath),
  )(
    'a key file the process may not read is an error naming the file (run as a non-root user)',
    async () => {
      const config = configWithKeyFile(unreadable);
      // As root every file is readable; the finding was made as an ordinary user.
      const result = await runCli(['validate-config', '--config', config], {
        timeoutMs: LIMIT_MS,
        uid: 65534,
      });
      expect(result.code).toBe(2);
      expect(result.stderr + result.stdout).toContain(
        `cannot read ${unreadable}: permission denied`,
      );
    },
  );
});
