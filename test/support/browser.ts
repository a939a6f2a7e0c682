/**
 * Debian's chromium driven by playwright-core: never a downloaded browser. `scripts/test.sh`
 * installs the package when it is missing; without it the test fails and says how to install it.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export interface RunningBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launches headless chromium with a fresh profile (`--user-data-dir`) removed on close. */
export async function launchChromium(): Promise<RunningBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: sudo apt-get install -y --no-install-recommends chromium`,
    );
  }
  const profile = await mkdtemp(join(tmpdir(), 'isa-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    timeout: 60_000,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
