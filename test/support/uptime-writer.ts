/**
 * A process that writes the uptime record as fast as it can, for the kill -9 test
 * (test/server/uptime-crash.integration.test.ts): a minute of pings (one per second) on a fake clock, then a
 * write, then the next minute. After each write it prints the count of pings the record holds.
 *
 *   node --import tsx test/support/uptime-writer.ts <path> <start ms>
 */
import { scheduledRun } from '../../bench/uptime-store.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { UptimeStore } from '../../src/server/uptime-store.js';

const [path, start] = process.argv.slice(2);
if (path === undefined || start === undefined) throw new Error('usage: uptime-writer <path> <ms>');
let now = Number(start);
const store = await UptimeStore.open({
  path,
  checks: CHECK_LIST,
  now: () => now,
  flushIntervalMs: 0,
});
let total = store.window('production', 'ping', '90d').runs;
for (;;) {
  for (let i = 0; i < 60; i++) {
    now += 1000;
    store.record(scheduledRun('ping', 'production', now, 40 + (i % 7), null));
    total += 1;
  }
  await store.flush();
  process.stdout.write(`${JSON.stringify({ total, now })}\n`);
}
