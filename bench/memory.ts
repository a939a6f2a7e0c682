/**
 * Where a running daemon's memory is: the process's resident memory by kind (anonymous or backed
 * by a file, `/proc/PID/smaps_rollup`), its mappings grouped (`/proc/PID/smaps`: the node binary,
 * other files, malloc's heap, thread stacks, anonymous mappings by size), its threads, and each V8
 * isolate's heap by space (main thread and measurement worker, through the inspector).
 *
 * Usage: npx tsx bench/memory.ts PID [--no-v8] [--inspector 127.0.0.1:9229]
 *
 * The V8 part sends SIGUSR1, which makes Node open its inspector on 127.0.0.1:9229 for the rest of
 * the process's life (that is Node's own behaviour, and the one way in from outside), then asks
 * each thread for `v8.getHeapSpaceStatistics()`. The resident figures are read before that, since
 * the inspector itself takes memory. Use it on a daemon started for measuring, not on one you keep.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { WebSocket } from 'undici';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { 'no-v8': { type: 'boolean' }, inspector: { type: 'string' } },
});
const pid = Number(positionals[0]);
if (!Number.isInteger(pid) || pid <= 0) {
  process.stderr.write('usage: npx tsx bench/memory.ts PID [--no-v8] [--inspector HOST:PORT]\n');
  process.exit(2);
}
const MiB = 1024 * 1024;
const fmt = (bytes: number): string => (bytes / MiB).toFixed(1).padStart(7);

// ---------------------------------------------------------------------------------------------
// Resident memory by kind and by mapping

function rollup(): Map<string, number> {
  const fields = new Map<string, number>();
  for (const line of readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').split('\n')) {
    const match = /^(\w+):\s+(\d+) kB/.exec(line);
    if (match) fields.set(match[1]!, Number(match[2]) * 1024);
  }
  return fields;
}

interface Mapping {
  start: number;
  size: number;
  path: string;
  rss: number;
  anonymous: number;
}

function mappings(): Mapping[] {
  const list: Mapping[] = [];
  let current: Mapping | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const start = parseInt(header[1]!, 16);
      current = {
        start,
        size: parseInt(header[2]!, 16) - start,
        path: header[3] ?? '',
        rss: 0,
        anonymous: 0,
      };
      list.push(current);
      continue;
    }
    const field = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line);
    if (field && current) {
      if (field[1] === 'Rss') current.rss = Number(field[2]) * 1024;
      else current.anonymous = Number(field[2]) * 1024;
    }
  }
  return list;
}

/**
 * A name for a mapping's group. Anonymous mappings carry no name, so their size says what they
 * most likely are: V8 allocates its heap in 256 KiB pages (larger objects get their own), glibc
 * gives each thread's malloc arena a 64 MiB reservation, and a thread stack is 8 MiB (libuv's
 * pool and V8's platform threads) or 4 MiB (worker threads) plus a guard page.
 */
function group(mapping: Mapping, executable: string): string {
  if (mapping.path === executable) return 'node binary (file)';
  if (mapping.path.startsWith('/')) return `file ${mapping.path.split('/').pop()}`;
  if (mapping.path !== '') return mapping.path;
  if (mapping.size === 256 * 1024) return 'anon: 256 KiB pages (V8 heap)';
  if (mapping.size > 32 * MiB) return 'anon: > 32 MiB (malloc arenas, V8 reservations)';
  // glibc aligns each arena of a thread (its heap) to 64 MiB.
  if (mapping.start % (64 * MiB) === 0) return 'anon: malloc arenas of threads';
  return 'anon: other sizes';
}

function printResident(): void {
  const fields = rollup();
  const rss = fields.get('Rss') ?? 0;
  const anonymous = fields.get('Anonymous') ?? 0;
  console.log(`pid ${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')}`);
  console.log(
    `RSS ${fmt(rss).trim()} MiB: anonymous ${fmt(anonymous).trim()}, file-backed ${fmt(rss - anonymous).trim()}`,
  );
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
  if (hwm) console.log(`peak (VmHWM) ${fmt(Number(hwm[1]) * 1024).trim()} MiB`);

  const executable = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
  const exe = executable.startsWith('/') ? executable : process.execPath;
  const groups = new Map<string, { rss: number; anonymous: number; count: number }>();
  for (const mapping of mappings()) {
    const name = group(mapping, exe);
    const entry = groups.get(name) ?? { rss: 0, anonymous: 0, count: 0 };
    entry.rss += mapping.rss;
    entry.anonymous += mapping.anonymous;
    entry.count += 1;
    groups.set(name, entry);
  }
  console.log('\nmappings, grouped    RSS MiB   anon MiB  mappings');
  for (const [name, entry] of [...groups].sort((a, b) => b[1].rss - a[1].rss)) {
    if (entry.rss < 64 * 1024) continue;
    console.log(
      `${fmt(entry.rss)} ${fmt(entry.anonymous)} ${String(entry.count).padStart(5)}  ${name}`,
    );
  }

  const threads = readdirSync(`/proc/${pid}/task`).map((tid) =>
    readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(),
  );
  const counts = new Map<string, number>();
  for (const name of threads) counts.set(name, (counts.get(name) ?? 0) + 1);
  console.log(
    `\nthreads (${threads.length}): ${[...counts].map(([n, c]) => (c > 1 ? `${n} ×${c}` : n)).join(', ')}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Each isolate's heap, through the inspector

/** Evaluated in each thread: its heap by space, and the totals. */
const HEAP_EXPRESSION = `JSON.stringify((() => {
  const v8 = require('node:v8');
  return { heap: v8.getHeapStatistics(), spaces: v8.getHeapSpaceStatistics() };
})())`;

interface HeapReport {
  heap: Record<string, number>;
  spaces: Array<{
    space_name: string;
    space_size: number;
    space_used_size: number;
    physical_space_size: number;
  }>;
}

async function inspectorUrl(address: string): Promise<string> {
  process.kill(pid, 'SIGUSR1');
  for (let attempt = 0; attempt < 50; attempt += 1) {
    try {
      const targets = (await (await fetch(`http://${address}/json/list`)).json()) as Array<{
        webSocketDebuggerUrl: string;
      }>;
      if (targets[0]) return targets[0].webSocketDebuggerUrl;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no inspector on ${address} after SIGUSR1`);
}

/** Asks the main thread and every worker for their heaps; resolves with them by thread. */
async function heaps(address: string): Promise<Map<string, HeapReport>> {
  const socket = new WebSocket(await inspectorUrl(address));
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  let nextId = 1;
  const pending = new Map<number, (result: unknown) => void>();
  const workerPending = new Map<string, (result: unknown) => void>();
  const workers: Array<{ sessionId: string; title: string }> = [];
  const send = (method: string, params: object = {}): Promise<unknown> => {
    const id = nextId++;
    socket.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve) => pending.set(id, resolve));
  };
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number;
      method?: string;
      result?: unknown;
      params?: { sessionId: string; message: string; workerInfo?: { title: string } };
    };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
    else if (message.method === 'NodeWorker.attachedToWorker' && message.params) {
      workers.push({
        sessionId: message.params.sessionId,
        title: message.params.workerInfo?.title ?? 'worker',
      });
    } else if (message.method === 'NodeWorker.receivedMessageFromWorker' && message.params) {
      const inner = JSON.parse(message.params.message) as { id?: number; result?: unknown };
      if (inner.id !== undefined)
        workerPending.get(`${message.params.sessionId}:${inner.id}`)?.(inner.result);
    }
  });
  const evaluate = {
    expression: HEAP_EXPRESSION,
    includeCommandLineAPI: true,
    returnByValue: true,
  };
  const parse = (result: unknown): HeapReport =>
    JSON.parse((result as { result: { value: string } }).result.value) as HeapReport;

  const reports = new Map<string, HeapReport>();
  reports.set('main thread', parse(await send('Runtime.evaluate', evaluate)));
  await send('NodeWorker.enable', { waitForDebuggerOnStart: false });
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (const { sessionId, title } of workers) {
    const inner = (id: number, method: string, params: object): Promise<unknown> => {
      const reply = new Promise((resolve) => workerPending.set(`${sessionId}:${id}`, resolve));
      void send('NodeWorker.sendMessageToWorker', {
        sessionId,
        message: JSON.stringify({ id, method, params }),
      });
      return reply;
    };
    reports.set(title, parse(await inner(1, 'Runtime.evaluate', evaluate)));
  }
  socket.close();
  return reports;
}

function printHeaps(reports: Map<string, HeapReport>): void {
  for (const [thread, report] of reports) {
    const { heap } = report;
    console.log(
      `\n${thread}: heap committed ${fmt(heap.total_heap_size!).trim()} MiB (physical ${fmt(heap.total_physical_size!).trim()}), ` +
        `used ${fmt(heap.used_heap_size!).trim()}, malloced ${fmt(heap.malloced_memory!).trim()} (peak ${fmt(heap.peak_malloced_memory!).trim()}), ` +
        `external ${fmt(heap.external_memory ?? 0).trim()}, contexts ${heap.number_of_native_contexts}`,
    );
    console.log('  space                   committed  physical    used   MiB');
    for (const space of report.spaces) {
      if (space.space_size === 0) continue;
      console.log(
        `  ${space.space_name.padEnd(22)}${fmt(space.space_size)}   ${fmt(space.physical_space_size)} ${fmt(space.space_used_size)}`,
      );
    }
  }
}

printResident();
if (!values['no-v8']) printHeaps(await heaps(values.inspector ?? '127.0.0.1:9229'));
