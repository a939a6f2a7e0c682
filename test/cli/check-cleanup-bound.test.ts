/**
 * `check lifecycle` keeps its final cleanup within its own bounds: with a 5 s timeout it ran
 * 40.5 s, because the last close of a session its run could not close waited the environment's
 * longest request timeout (the providers check's 30 s). Here the close never answers and the
 * providers check's request timeout is 60 s: the command must end within the lifecycle's own
 * timeout and cleanup bound (1 s requests, 5 s run), far from those 60 s.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { API_KEY } from '../support/harness.js';
import { useTestSimulator } from '../support/simulator-hooks.js';

const sim = useTestSimulator({ qualifyDelayMs: 200 });

async function config(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'isa-check-cleanup-'));
  const path = join(dir, 'config.yaml');
  await writeFile(
    path,
    `state_file: ${join(dir, 'sessions.json')}
environments:
  - name: production
    base_url: ${sim.url}/env/production
    api_key_env: ISA_PRODUCTION_API_KEY
    request_budget_per_second: 10
    ping: { timeout: 1s }
    providers: { interval: 15m, timeout: 60s }
    lifecycle:
      timeout: 5s
      request_timeout: 1s
      poll_interval: 200ms
      poll_timeout: 3s
      addresses:
        - { street1: "2 Pending Ave", zip: "80202", expect: available }
`,
  );
  return path;
}

describe('check lifecycle when the close never answers', () => {
  it("ends within the check's own timeout and cleanup bound, not another check's", async () => {
    sim.simulator.faults.add({ endpoint: 'close_session', fault: { kind: 'hang' } });
    const started = performance.now();
    const run = await runCli(['check', 'lifecycle', '--config', await config(), '--json'], {
      env: { ISA_PRODUCTION_API_KEY: API_KEY },
      timeoutMs: 90_000,
    });
    const elapsed = performance.now() - started;
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('1 synthetic session(s) could not be closed');
    // 5 s run, 1 s per close plus its 5 s of headroom, and process start-up; never the 60 s of
    // the providers check's request timeout.
    expect(elapsed).toBeLessThan(30_000);
  }, 100_000);
});
