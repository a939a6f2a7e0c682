import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { DEMO_TIMELINE, startSimulator } from '../simulator/index.js';
import { EXIT, parse, UsageError, type CliIO } from './io.js';
import { COMMAND_USAGE } from './usage.js';

/** `isa-monitor simulate [--port P] [--host H] [--api-key KEY ...]` */
export async function simulateCommand(args: string[], io: CliIO): Promise<number> {
  const { values } = parse(args, {
    port: { type: 'string' },
    host: { type: 'string' },
    'api-key': { type: 'string', multiple: true },
    mode: { type: 'string' },
    'demo-timeline': { type: 'boolean' },
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
    host: values.host ?? '127.0.0.1',
    ...(values['demo-timeline'] ? { timeline: DEMO_TIMELINE } : {}),
    // Request logs go to stderr: stdout's first line is the base URL, for scripts to read.
    logger: pino({ level: 'info', base: { name: 'isa-simulator' } }, pino.destination(2)),
  });
  io.out(simulator.url);
  await io.waitForStop();
  await simulator.close();
  return EXIT.ok;
}
