/**
 * Each registered check's fixtures (`src/checks/<name>/fixtures.ts`, the contract is
 * src/checks/shared/fixtures.ts), found by its name in the registry, in registry order. Every
 * check must have them: the tests that cover every check read them from here, so a new check is
 * in those tests without an edit to any of them (docs/architecture.md, "Adding a check").
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AnyCheck } from '../../src/kernel/check.js';
import type { CheckFixtures, DriftRead } from '../../src/checks/shared/fixtures.js';
import { CHECK_LIST } from '../../src/checks/index.js';

export const CHECK_FIXTURES: ReadonlyArray<{ check: string; fixtures: CheckFixtures }> =
  await Promise.all(
    (CHECK_LIST as readonly AnyCheck[]).map(async (check) => {
      const url = new URL(`../../src/checks/${check.name}/fixtures.ts`, import.meta.url);
      if (!existsSync(fileURLToPath(url))) {
        throw new Error(
          `check ${check.name} has no fixtures: src/checks/${check.name}/fixtures.ts`,
        );
      }
      const module = (await import(url.href)) as { fixtures: CheckFixtures };
      return { check: check.name, fixtures: module.fixtures };
    }),
  );

/** Each registered check's section in a file, by the check's name, where `section` gives one. */
export function fileSections(
  section: (fixtures: CheckFixtures) => Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> {
  return Object.fromEntries(
    CHECK_FIXTURES.flatMap(({ check, fixtures }) => {
      const value = section(fixtures);
      return value === undefined ? [] : [[check, value]];
    }),
  );
}

/**
 * The stateless reads of each registered check that has them (`driftReads`), with the check's
 * default interval in whole minutes: the drift tests and benchmark replay what the checks send.
 */
export const DRIFT_READS: ReadonlyArray<{
  check: string;
  everyMinutes: number;
  reads: readonly DriftRead[];
}> = CHECK_FIXTURES.flatMap(({ check, fixtures }) =>
  fixtures.driftReads === undefined
    ? []
    : [
        {
          check,
          everyMinutes: Math.max(1, Math.round(fixtures.config.defaults.intervalMs / 60_000)),
          reads: fixtures.driftReads,
        },
      ],
);
