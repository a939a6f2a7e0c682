import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionLedger } from '../../src/sessions/ledger.js';

async function tempPath(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'ledger-')), 'nested', 'sessions.json');
}

describe('SessionLedger', () => {
  it('writes a token to disk before add() resolves, and forgets it on remove()', async () => {
    const path = await tempPath();
    const ledger = await SessionLedger.open(path);
    await ledger.add('production', 'tok-1', 42);
    const onDisk = JSON.parse(await readFile(path, 'utf8')) as { sessions: unknown[] };
    expect(onDisk.sessions).toEqual([
      { environment: 'production', token: 'tok-1', createdAt: 42, owner: ledger.owner },
    ]);
    await ledger.remove('production', 'tok-1');
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({
      version: 2,
      sessions: [],
      intents: [],
    });
  });

  it('survives a restart: a new ledger on the same file lists what was open', async () => {
    const path = await tempPath();
    const first = await SessionLedger.open(path);
    await Promise.all([first.add('production', 'a'), first.add('sandbox', 'b')]);
    const second = await SessionLedger.open(path);
    // Nothing is the new process's own until it adopts what a gone owner left.
    expect(second.list()).toEqual([]);
    const adopted = await second.adoptOrphans();
    expect(adopted.sessions).toHaveLength(2);
    expect(
      second
        .list()
        .map((e) => e.token)
        .sort(),
    ).toEqual(['a', 'b']);
    expect(second.count('sandbox')).toBe(1);
  });

  it('reports open counts per environment after each change', async () => {
    const ledger = await SessionLedger.open(await tempPath());
    const seen: Array<[string, number]> = [];
    ledger.onChange((env, n) => seen.push([env, n]));
    await ledger.add('production', 'a');
    await ledger.add('production', 'b');
    await ledger.remove('production', 'a');
    expect(seen).toEqual([
      ['production', 1],
      ['production', 2],
      ['production', 1],
    ]);
  });

  it('refuses a corrupt file instead of silently forgetting open sessions', async () => {
    const path = await tempPath();
    const ledger = await SessionLedger.open(path);
    await ledger.add('production', 'a');
    await writeFile(path, '{not json');
    await expect(SessionLedger.open(path)).rejects.toThrow(/not valid JSON/);
  });

  it('reads a version-1 file: its sessions have no owner and are adopted', async () => {
    const path = await tempPath();
    await mkdir(dirname(path), { recursive: true });
    await writeFile(
      path,
      JSON.stringify({ version: 1, sessions: [{ environment: 'p', token: 't', createdAt: 1 }] }),
    );
    const ledger = await SessionLedger.open(path);
    expect((await ledger.adoptOrphans()).sessions.map((e) => e.token)).toEqual(['t']);
    expect(ledger.list('p').map((e) => e.token)).toEqual(['t']);
  });

  it('reports the intents of a gone owner once, and removes them', async () => {
    const path = await tempPath();
    const first = await SessionLedger.open(path);
    await first.addIntent({
      id: 'i-1',
      environment: 'production',
      createdAt: 5,
      correlationId: 'c-1',
      campaignId: 'camp',
      address: { street1: '1 Main St', zip: '80202' },
    });
    const second = await SessionLedger.open(path);
    const { intents } = await second.adoptOrphans();
    expect(intents).toMatchObject([{ id: 'i-1', correlationId: 'c-1', campaignId: 'camp' }]);
    expect((await second.adoptOrphans()).intents).toEqual([]);
  });

  // Finding 6 of the "close every session" issue: a full disk left one temporary file per write.
  it('leaves no temporary file behind when a write fails, and reports the failure once', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ledger-'));
    const dir = join(root, 'state');
    const ledger = await SessionLedger.open(join(dir, 'sessions.json'), { retryMs: 60_000 });
    await ledger.add('production', 'a');
    const changes: boolean[] = [];
    ledger.onWritableChange((writable) => changes.push(writable));
    // The directory becomes a file: every later write fails (even for root).
    await rm(dir, { recursive: true });
    await writeFile(dir, '');
    await expect(ledger.add('production', 'b')).rejects.toThrow();
    await expect(ledger.add('production', 'c')).rejects.toThrow();
    expect(ledger.writable).toBe(false);
    expect(changes).toEqual([false]);
    await rm(dir);
    await mkdir(dir);
    await ledger.checkWritable();
    expect(changes).toEqual([false, true]);
    expect((await readdir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    ledger.close();
  });
});
