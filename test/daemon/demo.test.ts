import { afterEach, describe, expect, it } from 'vitest';
import { eventually, startDaemonProcess, type DaemonProcess } from '../support/cli.js';

let daemon: DaemonProcess | undefined;
afterEach(() => daemon?.child.kill('SIGKILL'));

describe('demo mode', () => {
  it('starts without config, says so first, and both environments move within a minute', async () => {
    daemon = startDaemonProcess(['--listen', '127.0.0.1:0']);
    const url = await daemon.url;
    const firstLine = JSON.parse(
      daemon
        .output()
        .split('\n')
        .find((l) => l.includes('DEMO MODE')) ?? '{}',
    ) as {
      level?: number;
    };
    expect(firstLine.level).toBeGreaterThanOrEqual(40);
    // Within the first lines, before anything else the daemon does.
    expect(daemon.output().indexOf('DEMO MODE')).toBeLessThan(
      daemon.output().indexOf('serving /metrics'),
    );

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
