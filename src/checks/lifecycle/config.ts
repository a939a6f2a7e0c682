/**
 * The lifecycle check's configuration: its addresses and what each must qualify as, the poll
 * interval and timeout, the campaign id, the budget fit `validate-config` warns about, and the
 * options of `check lifecycle --base-url ...` (docs/configuration.md, "lifecycle").
 */
import { z } from 'zod';
import { addressCombination, sessionRequestSchema } from '../../api/schemas.js';
import {
  positiveDuration,
  shorterThan,
  WHEN_MAPPING,
  isMs,
  type Loose,
} from '../../config/rules.js';
import {
  checkSection,
  type BudgetMisfit,
  type BudgetShare,
  type CheckConfigBase,
  runDeadlineMs,
} from '../../config/section.js';
import { formatDuration } from '../../config/duration.js';
import { type AdHocOptions } from '../../kernel/check.js';

/** What an address is expected to qualify as; `any` accepts every final status. */
export const EXPECTATIONS = ['available', 'no_service', 'failed', 'any'] as const;

export interface AddressConfig {
  street1: string;
  street2?: string;
  city?: string;
  state?: string;
  zip?: string;
  /** The final qualify status a run must reach; `any` accepts every final status. */
  expect: (typeof EXPECTATIONS)[number];
}

export interface LifecycleConfig extends CheckConfigBase {
  pollIntervalMs: number;
  pollTimeoutMs: number;
  campaignId: string;
  /** Empty only when lifecycle is disabled. */
  addresses: AddressConfig[];
}

/**
 * The lifecycle address of a file-less configuration. Nothing is known about the operator's data,
 * so it asserts no qualify status (`any`): the run still proves create, poll, get, close and 410.
 */
export const DEFAULT_ENV_ADDRESS = { street1: '123 Main St', zip: '80202', expect: 'any' } as const;

/** A lifecycle address: the API's own field rules (a session request), plus what to expect. */
const addressSchema = sessionRequestSchema
  .pick({ street1: true, street2: true, city: true, state: true, zip: true })
  .extend({ expect: z.enum(EXPECTATIONS).default('available') })
  .superRefine((value, ctx) => {
    const v = value as Loose;
    const fields = [v['street1'], v['city'], v['state'], v['zip']];
    // Only judge the combination when the fields themselves are well-typed and street1 is there;
    // otherwise their own problems already say what is wrong.
    if (typeof v['street1'] !== 'string') return;
    if (!fields.every((f) => f === undefined || typeof f === 'string')) return;
    if (addressCombination(v as Parameters<typeof addressCombination>[0]) === null) {
      ctx.addIssue({
        code: 'custom',
        message:
          'needs one of the address combinations the API accepts: street1 with zip, street1 with city and state, or street1 with city and zip',
      });
    }
  }, WHEN_MAPPING);

export const section = checkSection({
  name: 'lifecycle',
  // request_timeout: each request of a run; 10 s is the ping timeout it used to borrow.
  defaults: { enabled: true, interval: '5m', timeout: '120s', requestTimeout: '10s' },
  shape: {
    poll_interval: positiveDuration().prefault('2s'),
    poll_timeout: positiveDuration().prefault('90s'),
    // The API's own rule for campaign_id (length 1-100).
    campaign_id: sessionRequestSchema.shape.campaign_id.unwrap().default('isa-monitor-synthetic'),
    addresses: z.array(addressSchema).optional(),
  },
  docs: {
    summary:
      'the session check: create, poll until qualified, get, close, check the closed session answers 410',
    keys: {
      timeout: { meaning: 'bounds the whole run' },
      request_timeout: {
        meaning:
          'the timeout of each single request of a run (create, each poll, get, close, verify) and of its cleanup close. 10 s is what these requests had before the key existed (they borrowed `ping.timeout`); the API answers each in well under a second, and qualification is bounded by `poll_timeout`, not by this',
      },
      poll_interval: {
        type: 'duration',
        meaning: 'greater than 0, shorter than `lifecycle.poll_timeout`',
      },
      poll_timeout: {
        type: 'duration',
        meaning:
          'greater than 0, shorter than `lifecycle.timeout`; after it the outcome is `timeout` (unknown), never `no_service`',
      },
      campaign_id: {
        type: 'string',
        meaning:
          "the API's rule: 1–100 characters. Tags synthetic sessions so analytics can tell them apart.",
      },
      addresses: {
        type: 'list',
        default: '**required when lifecycle is enabled**',
        meaning:
          'at least one; rotated, each run uses the next. Each address: see [Address](#address-environmentslifecycleaddresses)',
      },
    },
  },
  refine(v, issues) {
    shorterThan(v, issues, 'poll_interval', 'poll_timeout', 'lifecycle');
    shorterThan(v, issues, 'poll_timeout', 'timeout', 'lifecycle');
    // No built-in default address: whether an address is served is a fact about the operator's
    // data, and a lifecycle check that expects the wrong outcome alerts for nothing.
    if (v['enabled'] === true && v['addresses'] === undefined) {
      issues.addIssue({
        code: 'custom',
        path: ['addresses'],
        message: 'required when lifecycle is enabled',
      });
    } else if (
      v['enabled'] === true &&
      Array.isArray(v['addresses']) &&
      v['addresses'].length === 0
    ) {
      issues.addIssue({
        code: 'custom',
        path: ['addresses'],
        message: 'must list at least one address when lifecycle is enabled',
      });
    }
  },
  toConfig: (p) => ({
    pollIntervalMs: p.poll_interval,
    pollTimeoutMs: p.poll_timeout,
    campaignId: p.campaign_id,
    addresses: (p.addresses ?? []).map(toAddressConfig),
  }),
  // The most frequent request is a poll, one per poll interval.
  extraGaps: (v) =>
    isMs(v['poll_interval']) ? [{ key: 'lifecycle.poll_interval', ms: v['poll_interval'] }] : [],
  fileless: { addresses: [{ ...DEFAULT_ENV_ADDRESS }] },
  budgetFit: lifecycleBudgetFit,
});

/** The requests of a run besides its polls within `poll_timeout`: create, get, close, 410, a poll. */
export const LIFECYCLE_PACED_REQUESTS = 5;

/**
 * Whether a run fits its deadline when its requests are paced at what the budget leaves after
 * pings (docs/configuration.md, "Request budget"): its poll loop may last `poll_timeout`, one
 * poll's wait past it included, and five requests are paced at the budget's share. When the run
 * needs longer than its deadline, its steps end as `budget` against a healthy API.
 */
function lifecycleBudgetFit(c: LifecycleConfig, budget: BudgetShare): BudgetMisfit | null {
  const { share, perSecond, refillFactor, firstPerSecond } = budget;
  const deadlineMs = runDeadlineMs(c);
  const neededMs =
    share > 0 ? c.pollTimeoutMs + (LIFECYCLE_PACED_REQUESTS * 1000) / share : Infinity;
  if (neededMs <= deadlineMs) return null;
  const spareMs = deadlineMs - c.pollTimeoutMs;
  const shareNeeded = (LIFECYCLE_PACED_REQUESTS * 1000) / spareMs;
  const budgetNeeded = Math.ceil(((shareNeeded + firstPerSecond) / refillFactor) * 100) / 100;
  const rate = (n: number) => `${Math.round(n * 1000) / 1000}/s`;
  const pings = firstPerSecond > 0 ? ` - ${rate(firstPerSecond)} kept for pings` : '';
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10}s`;
  const arithmetic =
    share > 0
      ? `poll_timeout ${formatDuration(c.pollTimeoutMs)} + ${LIFECYCLE_PACED_REQUESTS} requests at the ${rate(share)} the budget leaves (request_budget_per_second ${perSecond} × ${refillFactor}${pings}) = ${seconds(neededMs)}`
      : `the budget leaves nothing after pings (request_budget_per_second ${perSecond} × ${refillFactor}${pings})`;
  const timeout = share > 0 ? seconds(Math.ceil(neededMs / 100) * 100) : 'what the budget allows';
  return {
    key: 'timeout',
    message:
      `a lifecycle run may need longer than its ${seconds(deadlineMs)} deadline: ${arithmetic}; ` +
      `its runs would end as "budget". Raise request_budget_per_second to at least ${budgetNeeded}, ` +
      `or lifecycle.timeout to at least ${timeout}, or lengthen ping.interval`,
  };
}

/** The address of `check lifecycle --base-url ...` without `--address`: a simulator test address. */
const AD_HOC_ADDRESS = '1 Instant Way, 80202';

/**
 * `"STREET1, ZIP"`, `"STREET1, CITY, ST"` or a JSON object with the API's field names; a string
 * is the problem with the text.
 */
function parseAddress(text: string): Record<string, string> | string {
  if (text.trim().startsWith('{')) {
    try {
      return JSON.parse(text) as Record<string, string>;
    } catch {
      return '--address is not valid JSON';
    }
  }
  const parts = text.split(',').map((p) => p.trim());
  const [street1, second, third] = parts;
  if (!street1 || !second || parts.length > 3) {
    return '--address expects "STREET1, ZIP", "STREET1, CITY, STATE" or JSON';
  }
  if (third !== undefined) return { street1, city: second, state: third };
  return { street1, zip: second };
}

function toAddressConfig(address: {
  street1: string;
  street2?: string | undefined;
  city?: string | undefined;
  state?: string | undefined;
  zip?: string | undefined;
  expect: AddressConfig['expect'];
}): AddressConfig {
  // Only the keys that were given, so the address can be sent as a session request as it is.
  const out: AddressConfig = { street1: address.street1, expect: address.expect };
  if (address.street2 !== undefined) out.street2 = address.street2;
  if (address.city !== undefined) out.city = address.city;
  if (address.state !== undefined) out.state = address.state;
  if (address.zip !== undefined) out.zip = address.zip;
  return out;
}

/** The options of `check lifecycle --base-url ...`: the address and what it should qualify as. */
export const LIFECYCLE_AD_HOC: AdHocOptions = {
  options: { address: { type: 'string' }, expect: { type: 'string' } },
  usage: `  --address ADDR        lifecycle: "STREET1, ZIP", "STREET1, CITY, STATE" or a JSON
                        object (default: "1 Instant Way, 80202", a simulator test address)
  --expect STATUS       lifecycle: expected qualify status: available | no_service |
                        failed | any (default: available)`,
  section(values) {
    const address = parseAddress(values['address'] ?? AD_HOC_ADDRESS);
    if (typeof address === 'string') return { problem: address };
    return { section: { addresses: [{ ...address, expect: values['expect'] ?? 'available' }] } };
  },
};
