/**
 * `POST /-/reload` and `PUT /-/reload` (docs/cli.md, "--web.enable-lifecycle"): what SIGHUP does,
 * for a sidecar in another container that cannot send a signal. As in Prometheus, the answer
 * comes once the reload is done: 200 when the file was applied, 500 with its problems when it was
 * refused, and 403 when the daemon was started without `--web.enable-lifecycle`.
 */
import type { Express } from 'express';

/** What a reload did: applied, or refused with its problems (each "key.path: message"). */
export type ReloadOutcome = { applied: true } | { applied: false; problems: readonly string[] };

export interface ReloadRouteOptions {
  enabled: boolean;
  /** Reloads as SIGHUP does; reloads asked at once run one after the other. */
  reload: () => Promise<ReloadOutcome>;
}

/** Adds `/-/reload` to `app`. */
export function reloadRoutes(app: Express, opts: ReloadRouteOptions): void {
  const handle = async (res: import('express').Response): Promise<void> => {
    res.type('text/plain');
    if (!opts.enabled) {
      res.status(403).send('Lifecycle API is not enabled.\n');
      return;
    }
    const outcome = await opts.reload();
    if (outcome.applied) {
      res.status(200).send('configuration reloaded\n');
      return;
    }
    res
      .status(500)
      .send(
        `configuration reload refused: the configuration in force stays\n${outcome.problems.join('\n')}\n`,
      );
  };
  app.post('/-/reload', (_req, res) => handle(res));
  app.put('/-/reload', (_req, res) => handle(res));
  app.all('/-/reload', (_req, res) => {
    res.set('Allow', 'POST, PUT').status(405).json({ error: 'method not allowed' });
  });
}
