/**
 * Node's HTTP modules, loaded with `require` rather than `import`. On Node 24 an ES import of
 * `node:http` fills its module namespace by reading every export, and three of them (`WebSocket`,
 * `CloseEvent`, `MessageEvent`) are getters that load Node's own copy of undici: 13 MiB of RSS for
 * a server that speaks no WebSocket (bench/README.md, "Node 24: where the memory goes"). `require`
 * returns the exports object and reads none of them.
 */
import { createRequire } from 'node:module';
import type * as Http from 'node:http';
import type * as Https from 'node:https';

const load = createRequire(import.meta.url);

export const http = load('node:http') as typeof Http;

/** `node:https`, loaded on first use. */
export function https(): typeof Https {
  return load('node:https') as typeof Https;
}
