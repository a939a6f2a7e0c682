/**
 * The Prometheus tools the alerting tests run as child processes. A missing tool fails the test
 * with the command that installs it: these tests must never pass by skipping.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

const INSTALL =
  'install them with: apt-get install -y --no-install-recommends prometheus prometheus-alertmanager';

/** The absolute path of `tool` on PATH; throws a clear error when it is not installed. */
export function requireTool(tool: 'promtool' | 'amtool' | 'prometheus-alertmanager'): string {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, tool);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  throw new Error(`${tool} is not on PATH; the alerting tests need it (${INSTALL})`);
}

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a tool to completion and returns its exit code and output; never rejects on exit code. */
export function runTool(
  tool: 'promtool' | 'amtool',
  args: readonly string[],
  options: { cwd?: string } = {},
): Promise<ToolResult> {
  const path = requireTool(tool);
  return new Promise((resolvePromise, reject) => {
    execFile(
      path,
      args,
      { cwd: options.cwd, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') {
          reject(err);
          return;
        }
        resolvePromise({ code: typeof err?.code === 'number' ? err.code : 0, stdout, stderr });
      },
    );
  });
}
