/**
 * The ping check's configuration: connection mode and confirmation pings (docs/configuration.md,
 * "ping").
 */
import { z } from 'zod';
import { formatDuration } from '../../config/duration.js';
import { parseDuration } from '../../config/duration.js';
import {
  asLoose,
  isMs,
  isRecord,
  notShorterThan,
  positiveDuration,
  timerInterval,
  type Issues,
  type Loose,
} from '../../config/rules.js';
import { checkSection } from '../../config/section.js';

/**
 * How a ping gets its connection: `new` opens one for every ping and closes it after (as
 * blackbox_exporter does), so connect and TLS are in every measurement; `reuse` keeps one alive
 * between pings, so they are in none unless the server closed it meanwhile.
 */
export const CONNECTION_MODES = ['new', 'reuse'] as const;

export type ConnectionMode = (typeof CONNECTION_MODES)[number];

/** Confirmation pings' defaults (docs/configuration.md, `ping.confirm`). */
export const CONFIRM_DEFAULTS = {
  enabled: true,
  interval: '10s',
  window: '3m',
  successes: 3,
} as const;

export interface PingConfirmConfig {
  intervalMs: number;
  windowMs: number;
  successes: number;
}

interface ParsedConfirm {
  enabled?: boolean | undefined;
  interval?: number | undefined;
  window: number;
  successes: number;
}

const DEFAULT_CONFIRM_INTERVAL_MS = parseDuration(CONFIRM_DEFAULTS.interval) ?? 10_000;

/** `ping.confirm`: on by default; its window must hold at least one confirmation ping. */
const confirmSchema = z
  .strictObject({
    // Both optional, to tell a default from a choice (see `confirmPolicy`).
    enabled: z.boolean().optional(),
    // Timer-driven, not cron: any duration of at least 1 s.
    interval: timerInterval().optional(),
    window: positiveDuration().prefault(CONFIRM_DEFAULTS.window),
    successes: z
      .number()
      .int({
        error: (issue) => `must be a whole number of at least 1 (got ${String(issue.input)})`,
      })
      .min(1, {
        error: (issue) => `must be a whole number of at least 1 (got ${String(issue.input)})`,
      })
      .default(CONFIRM_DEFAULTS.successes),
  })
  .superRefine(
    (value, issues) => {
      const v = value as Loose;
      notShorterThan(
        { window: v['window'], interval: v['interval'] ?? DEFAULT_CONFIRM_INTERVAL_MS },
        issues,
        'window',
        'interval',
        'ping.confirm',
      );
    },
    { when: (payload) => isRecord(payload.value) },
  );

/**
 * The confirmation settings of a parsed ping section (read loosely: other keys may have failed),
 * or null when they are off. Confirmation pings come between scheduled ones, so their interval
 * must be the shorter: a configured `enabled: true` or `interval` that is not is an error
 * (`explicit`); with every key at its default, a ping interval of 10 s or less already pings as
 * often as confirmation would, and confirmation is off.
 */
function confirmPolicy(v: Loose): { intervalMs: number; explicit: boolean; on: boolean } | null {
  const confirm = v['confirm'];
  if (!isRecord(confirm) || confirm['enabled'] === false) return null;
  const interval = confirm['interval'];
  const intervalMs = isMs(interval) ? interval : DEFAULT_CONFIRM_INTERVAL_MS;
  const explicit = confirm['enabled'] === true || isMs(interval);
  const pingInterval = v['interval'];
  return { intervalMs, explicit, on: isMs(pingInterval) && intervalMs < pingInterval };
}

function confirmFasterThanPings(v: Loose, issues: Issues): void {
  const policy = confirmPolicy(v);
  const pingInterval = v['interval'];
  if (policy === null || policy.on || !policy.explicit || !isMs(pingInterval)) return;
  issues.addIssue({
    code: 'custom',
    path: ['confirm', 'interval'],
    message: `must be shorter than ping.interval (${formatDuration(pingInterval)}), got ${formatDuration(policy.intervalMs)}${isMs(asLoose(v['confirm'])['interval']) ? '' : ' (the default)'}`,
  });
}

// request_timeout defaults to timeout: a ping run is one request. A new connection per ping by
// default: at the default 60 s most servers have closed an idle connection anyway, so `reuse`
// would measure a connect sometimes and not other times; `new` measures the same thing every
// time, as blackbox_exporter does (docs/configuration.md).
export const section = checkSection({
  name: 'ping',
  defaults: { enabled: true, interval: '60s', timeout: '10s' },
  shape: {
    connection: z.enum(CONNECTION_MODES).default('new'),
    confirm: confirmSchema.prefault({}),
  },
  docs: {
    summary: 'the `GET /ping` check',
    keys: {
      timeout: {
        meaning:
          "the run's deadline is this plus 1 s, so the request's own timeout fires first. Longer than 15 s, it adds a bucket bound at twice itself to `isa_ping_duration_seconds`",
      },
      request_timeout: { meaning: "the ping request's timeout" },
      connection: {
        type: 'string',
        meaning:
          '`new` opens a connection for every ping and closes it after, as blackbox_exporter does, so connect and TLS are in every measurement; `reuse` keeps one alive between pings. `new` is the default because at a 60 s interval most servers close an idle connection anyway, so `reuse` would measure a connect on some pings and not on others. Each ping reports which it did (`connection`: `opened` or `reused` in `check --json` and `/api/status`; `isa_ping_connections_opened_total`)',
      },
      confirm: {
        type: 'mapping',
        meaning:
          'confirmation pings after a slow or failed scheduled ping. See [Confirmation pings](#confirmation-pings)',
      },
      'confirm.enabled': {
        type: 'boolean',
        default: `\`${String(CONFIRM_DEFAULTS.enabled)}\` where \`ping.interval\` is longer than \`ping.confirm.interval\``,
        meaning:
          '`false` switches them off; `true` with an interval not shorter than `ping.interval` is an error',
      },
      'confirm.interval': {
        type: 'duration',
        default: `\`${CONFIRM_DEFAULTS.interval}\``,
        meaning:
          'at least `1s`, shorter than `ping.interval` (an error when set; with every key at its default, a `ping.interval` of 10 s or less turns confirmation off, as scheduled pings are already that frequent)',
      },
      'confirm.window': {
        type: 'duration',
        meaning:
          'greater than 0, not shorter than `ping.confirm.interval`; the sequence ends this long after the last scheduled ping that started it',
      },
      'confirm.successes': {
        type: 'integer',
        meaning: 'at least 1; the sequence ends after this many good confirmation pings in a row',
      },
    },
  },
  refine: confirmFasterThanPings,
  extraGaps: (v) => {
    const policy = confirmPolicy(v);
    return policy?.on === true ? [{ key: 'ping.confirm.interval', ms: policy.intervalMs }] : [];
  },
  toConfig: (parsed: { interval: number; connection: ConnectionMode; confirm: ParsedConfirm }) => {
    const policy = confirmPolicy(parsed as Loose);
    const confirm: PingConfirmConfig | null =
      policy?.on === true
        ? {
            intervalMs: policy.intervalMs,
            windowMs: parsed.confirm.window,
            successes: parsed.confirm.successes,
          }
        : null;
    return { connection: parsed.connection, confirm };
  },
  // Every ping, and every confirmation ping while a sequence runs, takes a token kept for it.
  firstRequestsPerSecond: (c) =>
    1000 / c.intervalMs + (c.confirm === null ? 0 : 1000 / c.confirm.intervalMs),
});

/** The ping's own settings, as its runs read them. */
export type PingConfig = ReturnType<typeof section.toConfig>;
