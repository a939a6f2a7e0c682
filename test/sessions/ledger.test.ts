import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    expect(onDisk.sessions).toEqual([{ environment: 'production', token: 'tok-1', createdAt: 42 }]);
    await ledger.remove('production', 'tok-1');
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ version: 1, sessions: [] });
  });

  it('survives a restart: a new ledger on the same file lists what was open', async () => {
    const path = await tempPath();
    const first = await SessionLedger.open(path);
    await Promise.all([first.add('production', 'a'), first.add('sandbox', 'b')]);
    const second = await SessionLedger.open(path);
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
});
