import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startDaemonProcess, type DaemonProcess } from '../support/cli.js';

let daemon: DaemonProcess | undefined;
afterEach(() => daemon?.child.kill('SIGKILL'));

describe('demo mode', () => {
  it('starts without config, says so first, and both environments move within a minute', async () => {
    daemon = startDaemonProcess(['--listen', '127.0.0.1:0']);
    const url = await daemon.url;
    // The very first line, before the simulator's and the daemon's start-up lines, names the
    // status page at the address actually bound (the port was 0).
    const lines = daemon
      .output()
      .split('\n')
      .filter((l) => l.trim() !== '');
    const first = JSON.parse(lines[0] ?? '{}') as {
      level?: number;
      msg?: string;
      status?: string;
      page?: string;
    };
    expect(first.msg).toMatch(/^DEMO MODE/);
    expect(first.msg).toContain(`${url}/`);
    expect(first.level).toBeGreaterThanOrEqual(40);
    expect(first.page).toBe(`${url}/`);
    expect(first.status).toBe(`${url}/api/status`);
    expect((await fetch(first.page ?? '')).headers.get('content-type')).toMatch(/^text\/html/);
    expect(lines.length).toBeGreaterThan(2);
    expect(lines.filter((l) => l.includes('DEMO MODE'))).toHaveLength(1);

    const attempts = async (environment: string): Promise<number> => {
      const text = await (await fetch(`${url}/metrics`)).text();
      return text
        .split('\n')
        .filter((l) => l.startsWith(`isa_ping_attempts_total{environment="${environment}"`))
        .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
    };
    await eventually(
      async () => {
        try {
          return (await attempts('sandbox')) > 0 && (await attempts('production')) > 0;
        } catch (err) {
          throw new Error(`${String(err)}\n${daemon?.output()}`);
        }
      },
      40_000,
      'pings in both demo environments',
    );
    daemon.child.kill('SIGTERM');
    expect((await daemon.exit).code).toBe(0);
  }, 60_000);
});
