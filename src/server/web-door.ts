/**
 * What `--web.config.file` and `--web.enable-lifecycle` add to the daemon's app and listener
 * (docs/deploy.md, "TLS and basic auth"; docs/cli.md), kept out of the daemon's start-up.
 */
import type { Logger } from 'pino';
import type { ServerAppOptions } from './app.js';
import { frontDoorGuard, type WebConfigSource } from './front-door.js';
import type { ReloadRouteOptions } from './reload-route.js';
import type { BoundedListenOptions } from './listen.js';

export interface WebDoorOptions {
  /** The web configuration in force; null: plain HTTP, no authentication. */
  source: WebConfigSource | null;
  reloadRoute: ReloadRouteOptions;
}

/** The app's and the listener's options for `web`. */
export function webDoorWiring(
  web: WebDoorOptions | undefined,
  logger: Logger,
): {
  app: Pick<ServerAppOptions, 'guard' | 'responseHeaders' | 'reloadRoute'>;
  listen: Pick<BoundedListenOptions, 'secure' | 'onConnection' | 'acceptPeer'>;
} {
  const source = web?.source ?? null;
  if (source === null) return { app: { reloadRoute: web?.reloadRoute }, listen: {} };
  const secure = source.current.tlsOptions ?? undefined;
  return {
    app: {
      guard: frontDoorGuard(source, logger),
      responseHeaders: () => source.current.headers,
      reloadRoute: web?.reloadRoute,
    },
    listen: {
      secure,
      onConnection: () =>
        source.refresh(logger) ? (source.current.tlsOptions ?? undefined) : undefined,
      ...(secure === undefined ? {} : { acceptPeer: (socket) => source.acceptPeer(socket) }),
    },
  };
}
