/**
 * The session endpoints: create, read, poll for providers, close. Implements the session state
 * machine (open → closed, then 410 for everything) and the qualify progression of the address.
 */
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import {
  addressCombination,
  offeringsEnvelopeSchema,
  SESSION_REQUEST_FIELDS,
  sessionEnvelopeSchema,
  sessionRequestSchema,
  type QualifyStatus,
  type RequestStatus,
  type SessionMeta,
  type SessionMetaShort,
  type SessionRequest,
} from '../../api/schemas.js';
import { testAddressBehaviour, VALIDATION_DOWN_RETRY_AFTER_SECONDS } from '../addresses.js';
import { offeringsFor } from '../catalog.js';
import {
  ctx,
  isJsonContentType,
  sendAddressValidationUnavailable,
  sendError,
  sendStatusFault,
  sendUnsupportedMediaType,
  sendValid,
} from '../http.js';
import { SESSION_TOKEN_PATTERN } from '../random.js';
import type { SessionRecord, SimulatorState } from '../state.js';

const QUALIFY_MESSAGES: Record<QualifyStatus, [string, RequestStatus]> = {
  available: ['Providers found for this address', 'ok'],
  pending: ['Provider lookup in progress; poll the internet services endpoint', 'ok'],
  retry_later: ['Provider lookup delayed by an upstream problem; keep polling', 'warning'],
  no_service: ['No provider serves this address', 'ok'],
  failed: ['Provider lookup failed for this address', 'error'],
};

const iso = (ms: number): string => new Date(ms).toISOString();

/** The session routes, bound to a state. */
export function sessionRoutes(state: SimulatorState, now: () => number): Router {
  const answers = sessionAnswers(state, now);
  const router = express.Router();

  router.post(
    '/sessions',
    requireJsonContentType,
    express.json({ type: () => true, strict: false }),
    (req, res) => {
      const request = sessionRequestOrAnswer(req.body, res);
      if (request) createSession(state, answers, request, res);
    },
  );

  router.get('/sessions/:token', (req, res) => {
    const session = sessionOrAnswer(state, req, res);
    if (session)
      answers.session(res, session, session.status === 'open' ? 'Session found' : 'Session closed');
  });

  router.get('/sessions/:token/services/internet', (req, res) => {
    const session = sessionOrAnswer(state, req, res);
    if (!session) return;
    // A forced status changes this one answer only; the session keeps its own progression.
    const forced = ctx(res).faults?.take('qualify');
    answers.offerings(res, 200, session, forced?.status ?? state.qualifyStatus(session), false);
  });

  router.delete('/sessions/:token', (req, res) => {
    const session = sessionOrAnswer(state, req, res);
    if (session) closeSession(state, answers, session, res);
  });

  return router;
}

/** The two success envelopes of the session endpoints. */
interface SessionAnswers {
  /** The offerings envelope of creation and polling. */
  offerings(
    res: Response,
    httpStatus: number,
    s: SessionRecord,
    qualify: QualifyStatus,
    creation: boolean,
  ): void;
  /** The session envelope of reading and closing. */
  session(res: Response, s: SessionRecord, message: string): void;
}

function sessionAnswers(state: SimulatorState, now: () => number): SessionAnswers {
  const fullMeta = (s: SessionRecord): SessionMeta => {
    const resolved = state.qualifyStatus(s);
    return {
      session_token: s.token,
      session_status: s.status,
      session_params: { ...s.params },
      service_address: s.serviceAddress,
      mdu: s.mdu,
      agent_status: {
        geocoding: 'matched',
        internet: resolved === 'pending' || resolved === 'retry_later' ? 'pending' : 'matched',
        checkout: 'pending',
      },
      created_at: iso(s.createdAt),
      updated_at: iso(state.updatedAt(s)),
      responded_at: iso(now()),
      service_data_set: s.serviceDataSet,
    };
  };

  const shortMeta = (s: SessionRecord): SessionMetaShort => ({
    session_token: s.token,
    session_status: s.status,
    responded_at: iso(now()),
    service_data_set: s.serviceDataSet,
  });

  return {
    offerings: (res, httpStatus, s, qualify, creation) => {
      // The cached creation answer is the short form with checkout extras; everything else is full.
      const cachedCreation = creation && s.fromCache && qualify === 'available';
      const [message, requestStatus] = QUALIFY_MESSAGES[qualify];
      res.setHeader('session_token', s.token);
      sendValid(res, httpStatus, offeringsEnvelopeSchema, {
        message,
        request_status: requestStatus,
        qualify_status: qualify,
        data:
          qualify === 'available'
            ? offeringsFor(s.providerIds, {
                sessionToken: s.token,
                withCheckoutExtras: cachedCreation,
              })
            : [],
        meta: cachedCreation ? shortMeta(s) : fullMeta(s),
      });
    },
    session: (res, s, message) => {
      res.setHeader('session_token', s.token);
      sendValid(res, 200, sessionEnvelopeSchema, {
        message,
        request_status: 'ok',
        qualify_status: state.qualifyStatus(s),
        data: { session_token: s.token },
        meta: fullMeta(s),
      });
    },
  };
}

/**
 * The session named in the path, or null after answering: 400 for a malformed or unknown token,
 * 410 for a closed session unless a `not_gone` fault makes the closed session answer anyway.
 */
function sessionOrAnswer(state: SimulatorState, req: Request, res: Response): SessionRecord | null {
  const token = String(req.params.token ?? '');
  const session = SESSION_TOKEN_PATTERN.test(token)
    ? state.findSession(ctx(res).environment, token)
    : undefined;
  if (!session) {
    sendError(res, 400, 'Invalid session token');
    return null;
  }
  if (session.status === 'closed' && !ctx(res).faults?.take('not_gone')) {
    sendError(res, 410, 'Session is closed and cannot be reopened');
    return null;
  }
  return session;
}

const requireJsonContentType: RequestHandler = (req, res, next) => {
  if (!isJsonContentType(req.get('content-type'))) {
    sendUnsupportedMediaType(res, req.get('content-type'));
    return;
  }
  next();
};

/**
 * The creation request in a parsed body, or null after answering: 400 for a body that is not an
 * object, has unpermitted fields or lacks street1; 422 for an invalid field or no address
 * combination.
 */
function sessionRequestOrAnswer(body: unknown, res: Response): SessionRequest | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    sendError(res, 400, 'The request body must be a JSON object of session parameters');
    return null;
  }
  const fields = body as Record<string, unknown>;
  const unpermitted = Object.keys(fields).filter(
    (k) => !(SESSION_REQUEST_FIELDS as readonly string[]).includes(k),
  );
  if (unpermitted.length > 0) {
    sendError(res, 400, `Unpermitted parameters: ${unpermitted.join(', ')}`);
    return null;
  }
  if (fields.street1 === undefined || fields.street1 === null || fields.street1 === '') {
    sendError(res, 400, 'param is missing or the value is empty: street1');
    return null;
  }
  const parsed = sessionRequestSchema.safeParse(fields);
  if (!parsed.success) {
    const errors: Record<string, string[]> = {};
    for (const issue of parsed.error.issues) {
      const field = issue.path.length > 0 ? String(issue.path[0]) : 'base';
      (errors[field] ??= []).push(issue.message);
    }
    sendError(res, 422, 'The address is invalid', { errors });
    return null;
  }
  if (addressCombination(parsed.data) === null) {
    sendError(res, 422, 'No valid address combination', {
      errors: {
        base: [
          'provide street1 with zip, street1 with city and state, or street1 with city and zip',
        ],
      },
    });
    return null;
  }
  return parsed.data;
}

/** Opens a session for a valid request, unless the test address says validation is down. */
function createSession(
  state: SimulatorState,
  answers: SessionAnswers,
  request: SessionRequest,
  res: Response,
): void {
  if (testAddressBehaviour(request.street1) === 'validation_down') {
    sendAddressValidationUnavailable(res, VALIDATION_DOWN_RETRY_AFTER_SECONDS);
    return;
  }
  const { environment, clientId } = ctx(res);
  const forced = ctx(res).faults?.take('qualify');
  const session = state.createSession({
    environment,
    clientId: clientId ?? 'anonymous',
    request,
    ...(forced ? { forcedStatus: forced.status } : {}),
  });
  ctx(res).logger.debug(
    { environment, stages: session.stages, fromCache: session.fromCache },
    'session created',
  );
  answers.offerings(res, 201, session, state.qualifyStatus(session), true);
}

/** Closes an open session (unless a `close_fail` fault refuses) and answers with it. */
function closeSession(
  state: SimulatorState,
  answers: SessionAnswers,
  session: SessionRecord,
  res: Response,
): void {
  if (session.status === 'open') {
    const closeFail = ctx(res).faults?.take('close_fail');
    if (closeFail) {
      sendStatusFault(res, closeFail.status ?? 500, undefined);
      return;
    }
    state.closeSession(session);
  }
  answers.session(res, session, 'Session closed');
}
