import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  driftStorePath,
  MAX_DRIFT_FILE_BYTES,
  readDriftState,
  writeDriftState,
} from '../../src/drift/store.js';
import { newOperationDrift, observe } from '../../src/drift/tracker.js';
import { creation, response } from './bodies.js';

async function scratch(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'drift-store-')), 'contract-baselines.json');
}

describe('the baselines on disk', () => {
  it('lives beside the session ledger', () => {
    expect(driftStorePath('/var/lib/isa/sessions.json')).toBe(
      '/var/lib/isa/contract-baselines.json',
    );
  });

  it('reads back what was written, an empty shape included', async () => {
    const path = await scratch();
    const drift = newOperationDrift(new Date(0));
    const fresh = newOperationDrift(new Date(0));
    observe(drift, { response: response(creation()), now: new Date(0) });
    await writeDriftState(path, { production: { create_session: drift, ping: fresh } });
    const read = await readDriftState(path);
    expect(read).toEqual({
      state: { production: { create_session: drift, ping: fresh } },
      extras: { facts: {}, across: {} },
      recovered: null,
    });
    expect(read.state['production']?.['ping']?.baseline.size.min).toBe(Number.POSITIVE_INFINITY);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('starts empty without a file', async () => {
    expect(await readDriftState(await scratch())).toEqual({
      state: {},
      extras: { facts: {}, across: {} },
      recovered: null,
    });
  });

  it('sets a torn file aside and starts again, keeping it for a person to read', async () => {
    const path = await scratch();
    await writeFile(path, '{"version":1,"environments":{"produ');
    expect(await readDriftState(path)).toEqual({
      state: {},
      extras: { facts: {}, across: {} },
      recovered: 'not JSON (a torn write?)',
    });
    expect(await readFile(`${path}.unreadable`, 'utf8')).toContain('produ');
  });

  it('refuses a FIFO without blocking, and a file over its cap without reading it', async () => {
    const fifo = await scratch();
    execFileSync('mkfifo', [fifo]);
    expect(await readDriftState(fifo)).toEqual({
      state: {},
      extras: { facts: {}, across: {} },
      recovered: 'not a regular file',
    });
    const large = await scratch();
    await writeFile(large, Buffer.alloc(MAX_DRIFT_FILE_BYTES + 1, 0x20));
    expect((await readDriftState(large)).recovered).toBe(
      `larger than ${MAX_DRIFT_FILE_BYTES} bytes`,
    );
  });
});
