import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SessionLedger, type CreateIntent, type LedgerEntry } from '../../src/sessions/ledger.js';

async function tempPath(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'ledger-')), 'nested', 'sessions.json');
}

/** A create intent as the session tracker records it; `overrides` change what a test looks at. */
function intent(overrides: Partial<Omit<CreateIntent, 'owner'>> = {}): Omit<CreateIntent, 'owner'> {
  return {
    id: 'i-1',
    environment: 'production',
    createdAt: 5,
    correlationId: 'c-1',
    campaignId: 'camp',
    address: { street1: '1 Main St', zip: '80202' },
    ...overrides,
  };
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
      version: 3,
      salt: expect.stringMatching(/^[\w-]{22}$/),
      sessions: [],
      intents: [],
    });
  });

  it("records a described environment's address and key reference, never the key", async () => {
    const path = await tempPath();
    const ledger = await SessionLedger.open(path);
    const apiKey = 'key-abcdef0123456789';
    ledger.describe('production', {
      baseUrl: 'http://127.0.0.1:9/env/production',
      keySource: { kind: 'file', path: '/run/secrets/isa' },
      apiKey,
    });
    await ledger.add('production', 'tok-1', 42);
    await ledger.addIntent(intent());
    const text = await readFile(path, 'utf8');
    expect(text).not.toContain(apiKey);
    const onDisk = JSON.parse(text) as { sessions: LedgerEntry[]; intents: CreateIntent[] };
    for (const item of [onDisk.sessions[0], onDisk.intents[0]]) {
      expect(item).toMatchObject({
        baseUrl: 'http://127.0.0.1:9/env/production',
        key: {
          source: { file: '/run/secrets/isa' },
          fingerprint: expect.stringMatching(/^[0-9a-f]{32}$/),
        },
      });
      const fingerprint = item?.key?.fingerprint ?? '';
      expect(ledger.keyMatches(apiKey, fingerprint)).toBe(true);
      expect(ledger.keyMatches('key-abcdef012345678X', fingerprint)).toBe(false);
    }
    // Another ledger file draws another salt: the same key gets another fingerprint there.
    const other = await SessionLedger.open(await tempPath());
    expect(other.keyMatches(apiKey, onDisk.sessions[0]?.key?.fingerprint ?? '')).toBe(false);
  });

  it('keeps the salt of the file it opened, and reads version-2 entries without one', async () => {
    const path = await tempPath();
    await mkdir(dirname(path), { recursive: true });
    const entry = { environment: 'production', token: 'tok-old', createdAt: 1 };
    await writeFile(path, JSON.stringify({ version: 2, sessions: [entry], intents: [] }));
    const ledger = await SessionLedger.open(path);
    const { sessions } = await ledger.adoptOrphans({ full: true });
    expect(sessions.map((e) => [e.token, e.baseUrl, e.key])).toEqual([
      ['tok-old', undefined, undefined],
    ]);
    const { salt } = JSON.parse(await readFile(path, 'utf8')) as { salt: string };
    const again = await SessionLedger.open(path);
    await again.add('staging', 'tok-2');
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ version: 3, salt });
  });

  it('settles a create in one write: its tokens in, its intent out', async () => {
    const path = await tempPath();
    const ledger = await SessionLedger.open(path);
    await ledger.addIntent(intent({ campaignId: '' }));
    const writes: string[] = [];
    ledger.onChange((environment, open) => writes.push(`${environment}:${open}`));
    await ledger.settleIntent('i-1', 'production', ['tok-1', 'tok-2', 'tok-1'], 42);
    expect(writes).toEqual(['production:2']);
    const onDisk = JSON.parse(await readFile(path, 'utf8')) as {
      sessions: Array<{ token: string; createdAt: number }>;
      intents: unknown[];
    };
    expect(onDisk.sessions.map((e) => [e.token, e.createdAt])).toEqual([
      ['tok-1', 42],
      ['tok-2', 42],
    ]);
    expect(onDisk.intents).toEqual([]);
    expect(ledger.pendingIntents()).toEqual([]);
    // Settled already, nothing new: no write at all.
    await ledger.settleIntent('i-1', 'production', ['tok-1']);
    expect(writes).toEqual(['production:2']);
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

  it('names the environments the file held sessions or intents of when it was opened', async () => {
    const path = await tempPath();
    expect([...(await SessionLedger.open(path)).namedAtOpen]).toEqual([]);
    const first = await SessionLedger.open(path);
    await first.add('sessions-env', 'tok-1');
    await first.addIntent(intent({ environment: 'intents-env', address: {} }));
    const second = await SessionLedger.open(path);
    expect([...second.namedAtOpen].sort()).toEqual(['intents-env', 'sessions-env']);
    // A snapshot of the opening: what is written later does not change it.
    await first.add('later-env', 'tok-2');
    expect(second.namedAtOpen.has('later-env')).toBe(false);
  });

  it('reports the intents of a gone owner once, and removes them', async () => {
    const path = await tempPath();
    const first = await SessionLedger.open(path);
    await first.addIntent(intent());
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

  describe('looks for orphans cheaply when nothing changed', () => {
    /** Another process's entry, owned by a pid that `alive` says is running or not. */
    function foreignEntry(pid: number) {
      return {
        environment: 'production',
        token: `tok-${pid}`,
        createdAt: 1,
        owner: { id: `other-${pid}`, pid },
      };
    }

    it('skips a look when the file is as it left it, and sees a change by another writer', async () => {
      const path = await tempPath();
      let now = 0;
      const ledger = await SessionLedger.open(path, { now: () => now });
      await ledger.add('production', 'mine');
      await ledger.adoptOrphans();
      // Another writer (a dead process's entry) replaces the file: the next look reads it.
      const onDisk = JSON.parse(await readFile(path, 'utf8')) as { sessions: unknown[] };
      onDisk.sessions.push(foreignEntry(2 ** 31 - 2));
      await writeFile(`${path}.x`, JSON.stringify(onDisk));
      await rename(`${path}.x`, path);
      now += 1_000;
      const { sessions } = await ledger.adoptOrphans();
      expect(sessions.map((e) => e.token)).toEqual([`tok-${2 ** 31 - 2}`]);
      ledger.close();
    });

    it('adopts when an owner the file named dies, though the file did not change', async () => {
      const path = await tempPath();
      await mkdir(dirname(path), { recursive: true });
      const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
      await once(child, 'spawn');
      await writeFile(
        path,
        JSON.stringify({ version: 2, sessions: [foreignEntry(child.pid!)], intents: [] }),
      );
      const ledger = await SessionLedger.open(path, { now: () => 0 });
      expect((await ledger.adoptOrphans()).sessions).toEqual([]);
      const before = await readFile(path, 'utf8');
      child.kill('SIGKILL');
      await once(child, 'exit');
      const { sessions } = await ledger.adoptOrphans();
      expect(sessions.map((e) => e.token)).toEqual([`tok-${child.pid}`]);
      expect(before).toContain(`tok-${child.pid}`);
      ledger.close();
    });

    it("removes a dead writer's temporary file at the next full look, or at once when asked", async () => {
      const path = await tempPath();
      let now = 0;
      const ledger = await SessionLedger.open(path, { now: () => now, fullLookMs: 60_000 });
      await ledger.add('production', 'mine');
      await ledger.adoptOrphans();
      const dead = `${path}.${2 ** 31 - 2}.0.tmp`;
      await writeFile(dead, '{');
      now += 1_000;
      await ledger.adoptOrphans();
      const tmps = async () => (await readdir(dirname(path))).filter((n) => n.endsWith('.tmp'));
      // The file did not change and no owner died: this look stopped at a stat.
      expect(await tmps()).toEqual([basename(dead)]);
      now += 60_000;
      await ledger.adoptOrphans();
      expect(await tmps()).toEqual([]);
      await writeFile(dead, '{');
      await ledger.adoptOrphans({ full: true });
      expect(await tmps()).toEqual([]);
      ledger.close();
    });
  });
});
