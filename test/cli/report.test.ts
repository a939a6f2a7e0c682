/**
 * `isa-monitor report`'s errors as a user meets them (docs/cli.md, "report"): one line on stderr,
 * exit 2 for usage, 1 for what went wrong at run time, never a stack trace.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

let html: Server;
let htmlUrl: string;
beforeAll(async () => {
  html = createServer((_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end('<!doctype html><p>login</p>');
  });
  await new Promise<void>((resolve) => html.listen(0, '127.0.0.1', resolve));
  htmlUrl = `http://127.0.0.1:${(html.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => html.close(() => resolve())));

const RANGE = ['--from', '2026-10-01', '--to', '2026-10-31T00:00:00Z'];

async function oneLine(args: string[], code: number): Promise<string> {
  const run = await runCli(['report', ...args]);
  expect(run.code).toBe(code);
  expect(run.stdout).toBe('');
  expect(run.stderr).not.toMatch(/\n\s+at /);
  return run.stderr;
}

describe('isa-monitor report errors', () => {
  it('usage errors exit 2', async () => {
    const url = ['--prometheus', htmlUrl];
    expect(await oneLine([...url, '--from', '2026-10-31', '--to', '2026-10-01'], 2)).toContain(
      'must be before --to',
    );
    expect(await oneLine([...url, '--from', 'yesterday', '--to', '2026-10-01'], 2)).toContain(
      '--from: not an ISO-8601 date or time: yesterday',
    );
    expect(await oneLine([...url, '--from', '2026-13-01', '--to', '2026-10-01'], 2)).toContain(
      'not an ISO-8601',
    );
    expect(await oneLine([...url, ...RANGE, '--format', 'pdf'], 2)).toContain(
      'unknown format "pdf"',
    );
    expect(await oneLine(RANGE, 2)).toContain('report needs --prometheus URL');
  }, 60_000);

  it('an unreachable URL and an HTML page exit 1 with one line', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const unreachable = await oneLine(['--prometheus', `http://127.0.0.1:${port}`, ...RANGE], 1);
    expect(unreachable).toMatch(/^isa-monitor report: cannot reach .*ECONNREFUSED.*\n$/);
    const page = await oneLine(['--prometheus', htmlUrl, ...RANGE], 1);
    expect(page).toMatch(
      /^isa-monitor report: .* is not a Prometheus API: HTTP 200 with text\/html, not JSON\n$/,
    );
  }, 60_000);

  it('prints its usage with --help', async () => {
    const run = await runCli(['report', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('--prometheus URL');
  });
});
