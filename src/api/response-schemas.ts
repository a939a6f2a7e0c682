/**
 * The spec's schema of each operation's successful answer, and of the error envelope: what the
 * drift of an operation is held to (docs/drift.md, "Severities"). The views are made once, on
 * first use.
 */
import type { z } from 'zod';
import type { SpecView } from '../drift/compare.js';
import type { Operation } from '../kernel/vocabulary.js';
import {
  analyticsDetailResponseSchema,
  analyticsListResponseSchema,
  coverageResponseSchema,
  errorEnvelopeSchema,
  offeringsEnvelopeSchema,
  pingResponseSchema,
  serviceProvidersResponseSchema,
  sessionEnvelopeSchema,
} from './schemas.js';
import { specShapeOf } from './spec-shape.js';

const RESPONSE_SCHEMAS: Partial<Record<Operation | 'error', z.ZodType>> = {
  ping: pingResponseSchema,
  create_session: offeringsEnvelopeSchema,
  poll_services: offeringsEnvelopeSchema,
  get_session: sessionEnvelopeSchema,
  close_session: sessionEnvelopeSchema,
  list_analytics_sessions: analyticsListResponseSchema,
  get_analytics_session: analyticsDetailResponseSchema,
  service_providers: serviceProvidersResponseSchema,
  coverage: coverageResponseSchema,
  error: errorEnvelopeSchema,
};

const views = new Map<string, SpecView>();

/** The spec's view of an operation's answers (or `error`), or undefined where it has none. */
export function responseSpecOf(key: string): SpecView | undefined {
  const known = views.get(key);
  if (known) return known;
  const schema = RESPONSE_SCHEMAS[key as Operation | 'error'];
  if (!schema) return undefined;
  const view = specShapeOf(schema);
  views.set(key, view);
  return view;
}
