/**
 * Types of the packages' internal files the daemon imports directly (exact versions are pinned in
 * package.json): undici's three classes and its connect-timeout error without its index
 * (api/timing.ts), and prom-client's default collectors without its lag monitor
 * (metrics/registry.ts). Static imports, so that the build bundles them with the rest of the
 * package.
 */
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const UndiciAgent: typeof Agent;
  export = UndiciAgent;
}

declare module 'undici/lib/dispatcher/pool.js' {
  import type { Pool } from 'undici';
  const UndiciPool: typeof Pool;
  export = UndiciPool;
}

declare module 'undici/lib/core/connect.js' {
  import type { buildConnector } from 'undici';
  const buildUndiciConnector: typeof buildConnector;
  export = buildUndiciConnector;
}

declare module 'undici/lib/core/errors.js' {
  import type { errors } from 'undici';
  export const ConnectTimeoutError: typeof errors.ConnectTimeoutError;
}

/** prom-client/lib/metrics/*.js: each registers its families in the registry it is given. */
type PromClientCollector = (registry: import('prom-client').Registry, config: object) => void;
declare module 'prom-client/lib/metrics/processCpuTotal.js' {
  const collector: PromClientCollector;
  export = collector;
}
declare module 'prom-client/lib/metrics/processStartTime.js' {
  const collector: PromClientCollector;
  export = collector;
}
declare module 'prom-client/lib/metrics/osMemoryHeap.js' {
  const collector: PromClientCollector;
  export = collector;
}
declare module 'prom-client/lib/metrics/processOpenFileDescriptors.js' {
  const collector: PromClientCollector;
  export = collector;
}
declare module 'prom-client/lib/metrics/processMaxFileDescriptors.js' {
  const collector: PromClientCollector;
  export = collector;
}
declare module 'prom-client/lib/metrics/processResources.js' {
  const collector: PromClientCollector;
  export = collector;
}
declare module 'prom-client/lib/metrics/processHandles.js' {
  const collector: PromClientCollector;
  export = collector;
}
declare module 'prom-client/lib/metrics/processRequests.js' {
  const collector: PromClientCollector;
  export = collector;
}
declare module 'prom-client/lib/metrics/heapSizeAndUsed.js' {
  const collector: PromClientCollector;
  export = collector;
}
declare module 'prom-client/lib/metrics/heapSpacesSizeAndUsed.js' {
  const collector: PromClientCollector;
  export = collector;
}
declare module 'prom-client/lib/metrics/version.js' {
  const collector: PromClientCollector;
  export = collector;
}
declare module 'prom-client/lib/metrics/gc.js' {
  const collector: PromClientCollector;
  export = collector;
}
