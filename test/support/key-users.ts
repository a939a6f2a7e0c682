/**
 * What the configuration says of an unset key variable names the checks that need the key: the
 * registered ones that send API requests and are enabled where the file leaves them alone. The
 * tests build the expected list from the registry, so a check added or removed with its folder
 * changes it without an edit to them (docs/architecture.md, "Adding a check").
 */
import { CHECK_LIST } from '../../src/checks/index.js';
import type { AnyCheck } from '../../src/kernel/check.js';

/** The checks enabled by default at `baseUrl` that send API requests, less `disabled`. */
export function defaultKeyUsers(baseUrl: string, disabled: readonly string[] = []): string[] {
  return (CHECK_LIST as readonly AnyCheck[])
    .filter((check) => check.usesApiKey !== false && !disabled.includes(check.name))
    .filter((check) => {
      const enabled = check.config.defaults.enabled;
      return typeof enabled === 'boolean' ? enabled : enabled({ baseUrl });
    })
    .map((check) => check.name);
}

/** The problem an unset key variable gets, ending with the checks that need the key. */
export function keyVariableUnset(variable: string, users: readonly string[]): string {
  const names =
    users.length < 2 ? users.join('') : `${users.slice(0, -1).join(', ')} and ${users.at(-1)}`;
  const needs = users.length === 1 ? 'check' : 'checks';
  const verb = users.length === 1 ? 'sends' : 'send';
  return `environment variable ${variable} is not set; the enabled ${needs} ${names} ${verb} API requests`;
}
