/**
 * What `--web.config.file` and `--web.enable-lifecycle` add to the daemon's app and listener
 * (docs/deploy.md, "TLS and basic auth"; docs/cli.md), kept out of the daemon's start-up.
 */
import type { Logger } from 'pino';
import type { ServerAppOptions } from './app.js';
import { frontDoorGuard, type WebConfigSource } from './front-door.js';
import type { LifecycleOptions } from './lifecycle.js';
import type { BoundedListenOptions } from './listen.js';

export interface WebDoorOptions {
  /** The web configuration in force; null: plain HTTP, no authentication. */
  source: WebConfigSource | null;
  lifecycle: LifecycleOptions;
}

/** The app's and the listener's options for `web`. */
export function webDoorWiring(
  web: WebDoorOptions | undefined,
  logger: Logger,
): {
  app: Pick<ServerAppOptions, 'guard' | 'responseHeaders' | 'lifecycle'>;
  listen: Pick<BoundedListenOptions, 'tls' | 'onConnection' | 'acceptPeer'>;
} {
  const source = web?.source ?? null;
  if (source === null) return { app: { lifecycle: web?.lifecycle }, listen: {} };
  const tls = source.current.tlsOptions ?? undefined;
  return {
    app: {
      guard: frontDoorGuard(source, logger),
      responseHeaders: () => source.current.headers,
      lifecycle: web?.lifecycle,
    },
    listen: {
      tls,
      onConnection: () =>
        source.refresh(logger) ? (source.current.tlsOptions ?? undefined) : undefined,
      ...(tls === undefined ? {} : { acceptPeer: (socket) => source.acceptPeer(socket) }),
    },
  };
}
