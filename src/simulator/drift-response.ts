/**
 * Where drift faults meet the answers (docs/simulator.md, "Drift faults"): every JSON body an
 * endpoint sends goes through `res.json`, so rewriting it there reaches every endpoint, error
 * envelopes included, after each body has passed its schema (`sendValid`).
 */
import type { Response } from 'express';
import { driftedBody, type DriftFault } from './drift.js';
import { ctx } from './http.js';

/**
 * Makes `res.json` send the body as the request's drift faults change it. The faults are looked
 * up when the body is sent, so a counted rule is used up only by a body it changes.
 */
export function installDriftFaults(res: Response): void {
  const json = res.json;
  res.json = function (this: Response, body?: unknown) {
    const faults = ctx(this).faults;
    if (faults === null) return json.call(this, body);
    const drifted = driftedBody(body, (applies) =>
      faults.take('drift', (fault) => applies(fault as DriftFault)),
    );
    return json.call(this, drifted);
  } as Response['json'];
}
