/**
 * The build's changes to bundled packages (scripts/build-plugins.mjs), each bundled here the way
 * `npm run build` bundles it and run in a child process: with the plugin, the package does what
 * the daemon needs of it without what the plugin leaves out; without it, the test's probe sees
 * the difference, so the probe can fail.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { iconvUnicodeOnly, nodeCronLocalTime } from '../../scripts/build-plugins.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Bundles `program` (an ES module importing packages) with `plugins` and runs it; its stdout. */
async function runBundled(
  program: string,
  plugins: Plugin[],
  env: NodeJS.ProcessEnv = {},
): Promise<string> {
  const out = await build({
    stdin: { contents: program, resolveDir: ROOT, loader: 'js' },
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    logLevel: 'silent',
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
    plugins,
  });
  // On stdin: a bundle of iconv-lite's code pages is longer than an argument may be.
  return execFileSync(process.execPath, ['--input-type=module'], {
    input: out.outputFiles[0]!.text,
    env: { PATH: process.env['PATH'], ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
}

/**
 * node-cron with `Intl.DateTimeFormat` made to throw: a task due every second fires, or the
 * program reports what threw (or, after 10 s, that nothing fired).
 */
const CRON_WITHOUT_INTL = `
import { createTask } from 'node-cron';
Intl.DateTimeFormat = function () { throw new Error('Intl.DateTimeFormat called'); };
const task = createTask('* * * * * *', (context) => {
  console.log(JSON.stringify({ fired: true, at: context.date.getTime() }));
  task.destroy();
});
task.on('execution:failed', (e) => console.log(JSON.stringify({ failed: String(e.execution?.error) })));
try { await task.start(); } catch (err) { console.log(JSON.stringify({ threw: String(err) })); process.exit(0); }
setTimeout(() => { console.log(JSON.stringify({ fired: false })); process.exit(0); }, 10000).unref();
`;

describe('nodeCronLocalTime', () => {
  it.each(['UTC', 'America/New_York', 'Asia/Kolkata'])(
    'lets node-cron fire without Intl in the local time zone (%s)',
    async (zone) => {
      const out = JSON.parse(
        (await runBundled(CRON_WITHOUT_INTL, [nodeCronLocalTime], { TZ: zone })).trim(),
      ) as { fired: boolean; at: number };
      expect(out.fired).toBe(true);
      // On a whole second, as the expression asks.
      expect(out.at % 1000).toBe(0);
    },
  );

  it('is what keeps node-cron from Intl: unpatched, the probe sees Intl called', async () => {
    const out = await runBundled(CRON_WITHOUT_INTL, []);
    expect(out).toContain('Intl.DateTimeFormat called');
  });
});

describe('iconvUnicodeOnly', () => {
  const PROGRAM = `
import iconv from 'iconv-lite';
console.log(JSON.stringify({
  utf8: iconv.decode(Buffer.from('{"a":"é"}'), 'utf-8'),
  utf16: iconv.encodingExists('utf-16le'),
  gbk: iconv.encodingExists('gbk'),
  latin2: iconv.encodingExists('iso-8859-2'),
}));`;

  it('keeps the Unicode encodings and leaves out the legacy code pages', async () => {
    const out = JSON.parse((await runBundled(PROGRAM, [iconvUnicodeOnly])).trim()) as object;
    expect(out).toEqual({ utf8: '{"a":"é"}', utf16: true, gbk: false, latin2: false });
    const unpatched = JSON.parse((await runBundled(PROGRAM, [])).trim()) as object;
    expect(unpatched).toMatchObject({ gbk: true, latin2: true });
  });
});
