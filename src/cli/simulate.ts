import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pino } from 'pino';
import { DEMO_TIMELINE, startSimulator } from '../simulator/index.js';
import { EXIT, parse, UsageError, type CliIO } from './io.js';
import { COMMAND_USAGE } from './usage.js';

/** How long the certificate of `simulate --tls` lasts without `--tls-days`. */
const DEFAULT_TLS_DAYS = 30;

/**
 * `isa-monitor simulate [--port P] [--host H] [--api-key KEY ...] [--tls [--tls-days N]
 * [--tls-host NAME ...] [--tls-ca-out FILE]]`
 */
export async function simulateCommand(args: string[], io: CliIO): Promise<number> {
  const { values } = parse(args, {
    port: { type: 'string' },
    host: { type: 'string' },
    'api-key': { type: 'string', multiple: true },
    mode: { type: 'string' },
    'demo-timeline': { type: 'boolean' },
    tls: { type: 'boolean' },
    'tls-days': { type: 'string' },
    'tls-host': { type: 'string', multiple: true },
    'tls-ca-out': { type: 'string' },
    help: { type: 'boolean' },
  });
  if (values.help) {
    io.out(COMMAND_USAGE['simulate'] ?? '');
    return EXIT.ok;
  }
  const port = Number(values.port ?? '8080');
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--port expects a port number, got "${values.port}"`);
  }
  const mode = values.mode ?? 'fast';
  if (mode !== 'fast' && mode !== 'realistic') {
    throw new UsageError(`--mode expects fast or realistic, got "${mode}"`);
  }
  const host = values.host ?? '127.0.0.1';
  const tls = tlsOptions(values, host);
  let apiKeys = values['api-key'] ?? [];
  if (apiKeys.length === 0 && io.env['ISA_SIMULATOR_API_KEY']) {
    apiKeys = [io.env['ISA_SIMULATOR_API_KEY']];
  }
  if (apiKeys.length === 0) {
    const key = `sim-${randomBytes(12).toString('hex')}`;
    apiKeys = [key];
    io.err(`no --api-key given; the simulator accepts: ${key}`);
  }

  const simulator = await startSimulator({
    apiKeys,
    mode,
    port,
    host,
    ...(values['demo-timeline'] ? { timeline: DEMO_TIMELINE } : {}),
    ...(tls === null ? {} : { tls }),
    // Request logs go to stderr: stdout's first line is the base URL, for scripts to read.
    logger: pino({ level: 'info', base: { name: 'isa-simulator' } }, pino.destination(2)),
  });
  const caOut = values['tls-ca-out'];
  if (caOut !== undefined && simulator.caPem !== null) {
    // Written before the URL is printed: a script that reads the URL can use the file at once.
    try {
      writeFileSync(resolve(io.cwd, caOut), simulator.caPem);
    } catch (err) {
      await simulator.close();
      throw new UsageError(
        `--tls-ca-out: cannot write ${caOut}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
  }
  io.out(simulator.url);
  await io.waitForStop();
  await simulator.close();
  return EXIT.ok;
}

/**
 * The certificate `--tls` asks for: `--tls-days` of validity (negative: expired that long ago),
 * for `--tls-host` names, by default `localhost`, `127.0.0.1` and the address listened on when it
 * is a specific one. Null without `--tls`; the other `--tls-*` options need it.
 */
function tlsOptions(
  values: { tls?: boolean; 'tls-days'?: string; 'tls-host'?: string[]; 'tls-ca-out'?: string },
  host: string,
): { validDays: number; hosts: string[] } | null {
  if (!values.tls) {
    for (const option of ['tls-days', 'tls-host', 'tls-ca-out'] as const) {
      if (values[option] !== undefined) throw new UsageError(`--${option} needs --tls`);
    }
    return null;
  }
  const daysText = values['tls-days'];
  const validDays = daysText === undefined ? DEFAULT_TLS_DAYS : Number(daysText);
  if (daysText !== undefined && (daysText.trim() === '' || !Number.isFinite(validDays))) {
    throw new UsageError(`--tls-days expects a number of days, got "${daysText}"`);
  }
  const listened = host === '0.0.0.0' || host === '::' ? [] : [host];
  const hosts = values['tls-host'] ?? [
    ...new Set(['localhost', '127.0.0.1', ...listened.map((h) => h.replace(/^\[|\]$/g, ''))]),
  ];
  return { validDays, hosts };
}
