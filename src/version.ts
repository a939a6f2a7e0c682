import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The package version, read once from package.json next to the build output. */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

/** Version, git revision (from GIT_COMMIT, else git, else "unknown") and Node version. */
export function buildInfo(): { version: string; revision: string; nodejs: string } {
  return { version: VERSION, revision: revision(), nodejs: process.versions.node };
}

function revision(): string {
  const fromEnv = process.env['GIT_COMMIT'];
  if (fromEnv) return fromEnv;
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], {
      cwd: new URL('..', import.meta.url),
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 2_000,
    })
      .toString()
      .trim();
  } catch {
    return 'unknown';
  }
}
