/**
 * The admin API under `/__sim/`: inspect and change fault rules, the timeline and sessions while
 * the simulator runs. No credential and no rate limit: it is a test and demo control surface,
 * reachable only where the simulator listens (loopback by default).
 */
import express, { type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import { faultRuleSchema, type FaultController } from './faults.js';
import type { SimulatorState } from './state.js';

export interface AdminDeps {
  state: SimulatorState;
  faults: FaultController;
  now: () => number;
  /** Resets everything else the app keeps (rate-limit windows). */
  onReset: () => void;
}

const timelineControlSchema = z.strictObject({
  enabled: z.boolean().optional(),
  restart: z.boolean().optional(),
});

/** The `/__sim` router. */
export function adminRoutes(deps: AdminDeps): Router {
  const { state, faults, now } = deps;
  const router = express.Router();
  router.use(express.json({ strict: false }));

  router.get('/faults', (_req, res) => {
    res.json(faults.describe());
  });
  router.post('/faults', (req, res) => addFaultRule(faults, req, res));
  router.delete('/faults', (_req, res) => {
    faults.clear();
    res.status(204).end();
  });
  router.delete('/faults/:id', (req, res) => {
    if (faults.remove(req.params.id)) res.status(204).end();
    else res.status(404).json({ message: `no fault rule ${req.params.id}` });
  });

  router.post('/timeline', (req, res) => controlTimeline(faults, req, res));
  router.get('/sessions', (req, res) => listSessions(state, now, req, res));

  router.post('/reset', (_req, res) => {
    state.reset();
    faults.clear();
    faults.restartTimeline();
    deps.onReset();
    res.status(204).end();
  });

  router.use((req, res) => {
    res.status(404).json({ message: `no admin route ${req.method} /__sim${req.path}` });
  });

  return router;
}

function sendInvalidBody(res: Response, error: z.ZodError): void {
  res.status(400).json({ message: z.prettifyError(error), issues: error.issues });
}

function addFaultRule(faults: FaultController, req: Request, res: Response): void {
  const parsed = faultRuleSchema.safeParse(req.body);
  if (!parsed.success) return sendInvalidBody(res, parsed.error);
  const id = faults.add(parsed.data);
  res.status(201).json({ id, rule: parsed.data });
}

/** Restarts, enables or disables the demo timeline, and answers with its state. */
function controlTimeline(faults: FaultController, req: Request, res: Response): void {
  const parsed = timelineControlSchema.safeParse(req.body ?? {});
  if (!parsed.success) return sendInvalidBody(res, parsed.error);
  if (parsed.data.restart) faults.restartTimeline();
  if (parsed.data.enabled !== undefined) faults.setTimelineEnabled(parsed.data.enabled);
  res.json(faults.describe().timeline);
}

/** The sessions the simulator holds, filtered by `status` and `environment`. */
function listSessions(state: SimulatorState, now: () => number, req: Request, res: Response): void {
  const status = req.query.status;
  const environment = req.query.environment;
  if (status !== undefined && status !== 'open' && status !== 'closed') {
    res.status(400).json({ message: 'status must be open or closed' });
    return;
  }
  const sessions = state.sessions({
    ...(status !== undefined ? { status } : {}),
    ...(typeof environment === 'string' ? { environment } : {}),
  });
  res.json({
    count: sessions.length,
    sessions: sessions.map((s) => ({
      session_token: s.token,
      environment: s.environment,
      client: s.clientId,
      session_status: s.status,
      qualify_status: state.qualifyStatus(s),
      service_address: s.serviceAddress,
      created_at: new Date(s.createdAt).toISOString(),
      closed_at: s.closedAt === null ? null : new Date(s.closedAt).toISOString(),
    })),
    responded_at: new Date(now()).toISOString(),
  });
}
