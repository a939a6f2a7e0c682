/**
 * Debian's tinyproxy as the egress proxy of the proxy tests (docs/configuration.md, "Egress
 * proxy"), run in the foreground with a configuration of the test's own on a free loopback port.
 * A missing binary fails the test with the command that installs it (scripts/test.sh installs
 * it): these tests must never pass by skipping.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  constants,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TINYPROXY = '/usr/bin/tinyproxy';

export interface TinyproxyOptions {
  /** `BasicAuth USER PASSWORD`: the proxy asks for these credentials. */
  basicAuth?: { user: string; password: string };
  /** `ConnectPort` lines: CONNECT only to these ports (none: every port). */
  connectPorts?: number[];
}

export interface RunningTinyproxy {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  port: number;
  /** What tinyproxy logged so far (LogLevel Info: one line per request). */
  log(): string;
  stop(): Promise<void>;
}

/** A free loopback port: bound to 0 and released (tinyproxy takes a port number only). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves once something accepts connections on the port. */
async function listening(port: number, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (child.exitCode !== null) throw new Error(`tinyproxy exited with ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket: Socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('tinyproxy did not start listening');
}

/** Starts tinyproxy in the foreground (`tinyproxy -d -c FILE`). */
export async function startTinyproxy(options: TinyproxyOptions = {}): Promise<RunningTinyproxy> {
  try {
    accessSync(TINYPROXY, constants.X_OK);
  } catch {
    throw new Error(
      'tinyproxy is not installed: apt-get install -y --no-install-recommends tinyproxy',
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'isa-tinyproxy-'));
  // tinyproxy drops to `User` when started as root; the log file must stay writable for it.
  chmodSync(dir, 0o777);
  const logFile = join(dir, 'tinyproxy.log');
  const port = await freePort();
  const lines = [
    ...(process.getuid?.() === 0 ? ['User nobody', 'Group nogroup'] : []),
    `Port ${port}`,
    'Listen 127.0.0.1',
    'Timeout 30',
    `LogFile "${logFile}"`,
    'LogLevel Info',
    'MaxClients 20',
    'Allow 127.0.0.1',
    'DisableViaHeader No',
    ...(options.basicAuth
      ? [`BasicAuth ${options.basicAuth.user} ${options.basicAuth.password}`]
      : []),
    ...(options.connectPorts ?? []).map((p) => `ConnectPort ${p}`),
  ];
  const configFile = join(dir, 'tinyproxy.conf');
  writeFileSync(configFile, `${lines.join('\n')}\n`);
  const child = spawn(TINYPROXY, ['-d', '-c', configFile], { stdio: 'ignore' });
  await listening(port, child);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    log: () => {
      try {
        return readFileSync(logFile, 'utf8');
      } catch {
        return '';
      }
    },
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A proxy that accepts connections and never answers: a CONNECT that never completes. */
export async function startSilentProxy(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
