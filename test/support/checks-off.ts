/**
 * A test that runs some checks switches every other registered check off, whichever they are: a
 * check added or removed with its folder changes these sections without an edit to the tests
 * (docs/architecture.md, "Adding a check").
 */
import { CHECK_NAMES } from '../../src/checks/index.js';

/** `{ enabled: false }` sections of every registered check but `kept`, by name. */
export function checksOff(kept: readonly string[]): Record<string, { enabled: false }> {
  return Object.fromEntries(
    CHECK_NAMES.filter((name) => !kept.includes(name)).map((name) => [name, { enabled: false }]),
  );
}

/** The same sections as YAML lines of an environment, indented by `indent`. */
export function checksOffLines(kept: readonly string[], indent = '    '): string[] {
  return Object.keys(checksOff(kept)).map((name) => `${indent}${name}: { enabled: false }`);
}
