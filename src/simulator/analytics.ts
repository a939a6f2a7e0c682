/**
 * Analytics records: one per session a client created, with cart progression and order data.
 * Each client (API key) of each environment starts with a seeded, reproducible history so the
 * analytics endpoints have orders, installs and commissions to page through; sessions created
 * through the simulator are appended to the history of the key that created them.
 */
import type { AnalyticsSessionDetail, AnalyticsSessionRow } from './schemas.js';
import type { SessionRecord } from './state.js';
import { pick, randomInt, seededRandom, seededUuid } from './random.js';

export const CART_STEPS = ['plan_selection', 'internet_addons', 'customer_info'] as const;

export interface AnalyticsRecord {
  id: string;
  sessionToken: string;
  createdAt: number;
  context: 'move_in' | 'move_out';
  campaignId: string | null;
  address: { street1: string; street2: string | null; city: string; state: string; zip: string };
  furthestStep: number;
  /** Click activity (provider links, checkout buttons); `with_clicks=true` keeps rows with some. */
  clicks: number;
  order: {
    orderNumber: string;
    status: string;
    orderedAt: number;
    installed: boolean;
    installedAt: number | null;
    commissionCents: number | null;
  } | null;
  cartProgression: Array<{ step: number; stepName: string; at: number }>;
  /** Last change of seeded data; live sessions derive it from the session instead. */
  updatedAt: number;
  /** The simulator session behind this record, for sessions created through the simulator. */
  session: SessionRecord | null;
}

const DAY = 86_400_000;
const SEED_STREETS = [
  'Maple Ave',
  'Oak St',
  'Pine Rd',
  'Cedar Ln',
  'Elm St',
  'Lakeview Dr',
  'Park Pl',
  'Main St',
  'River Rd',
  'Hillcrest Ave',
];
// prettier-ignore
const SEED_PLACES: Array<[string, string, string]> = [
  ['Denver', 'CO', '80205'], ['Aurora', 'CO', '80012'], ['Chicago', 'IL', '60614'],
  ['Brooklyn', 'NY', '11215'], ['Austin', 'TX', '78704'], ['Seattle', 'WA', '98103'],
  ['Atlanta', 'GA', '30308'], ['Philadelphia', 'PA', '19147'], ['Los Angeles', 'CA', '90026'],
];
const SEED_CAMPAIGNS = [null, null, 'spring-move', 'partner-portal', 'welcome-email'];

/**
 * The seeded history of one client in one environment, relative to `epoch` (the simulator's
 * start): about 130 sessions over the past 45 days, a third of those reaching checkout ordering.
 */
export function seedAnalytics(seed: number, epoch: number): AnalyticsRecord[] {
  const random = seededRandom(seed);
  const count = randomInt(random, 120, 140);
  const records: AnalyticsRecord[] = [];
  for (let i = 0; i < count; i++) {
    const createdAt = epoch - Math.floor(random() * 45 * DAY) - 60_000;
    const [city, state, zip] = pick(random, SEED_PLACES);
    const clicks = random() < 0.6 ? randomInt(random, 1, 6) : 0;
    const furthestStep = clicks > 0 ? randomInt(random, 1, CART_STEPS.length) : 0;
    const cartProgression = CART_STEPS.slice(0, furthestStep).map((stepName, k) => ({
      step: k + 1,
      stepName,
      at: createdAt + (k + 1) * randomInt(random, 30_000, 240_000),
    }));
    const lastStepAt = cartProgression[cartProgression.length - 1]?.at ?? createdAt;
    let order: AnalyticsRecord['order'] = null;
    if (furthestStep === CART_STEPS.length && random() < 0.55) {
      const orderedAt = Math.min(lastStepAt + randomInt(random, 60_000, 900_000), epoch - 1000);
      const installAt = orderedAt + randomInt(random, 2, 14) * DAY;
      const installed = installAt < epoch;
      order = {
        orderNumber: `ORD-${String(randomInt(random, 10_000_000, 99_999_999))}`,
        status: 'complete',
        orderedAt,
        installed,
        installedAt: installed ? installAt : null,
        // Commission is earned on installation.
        commissionCents: installed ? randomInt(random, 40, 150) * 100 : null,
      };
    }
    const token = Buffer.from(
      Array.from({ length: 18 }, () => Math.floor(random() * 256)),
    ).toString('base64url');
    records.push({
      id: seededUuid(random),
      sessionToken: token,
      createdAt,
      context: random() < 0.85 ? 'move_in' : 'move_out',
      campaignId: pick(random, SEED_CAMPAIGNS),
      address: {
        street1: `${randomInt(random, 10, 9999)} ${pick(random, SEED_STREETS)}`,
        street2: random() < 0.3 ? `Apt ${randomInt(random, 1, 40)}` : null,
        city,
        state,
        zip,
      },
      furthestStep,
      clicks,
      order,
      cartProgression,
      updatedAt: Math.max(createdAt, lastStepAt, order?.orderedAt ?? 0, order?.installedAt ?? 0),
      session: null,
    });
  }
  return records;
}

/** The analytics record of a session created through the simulator. */
export function recordForSession(session: SessionRecord, id: string): AnalyticsRecord {
  const p = session.params;
  return {
    id,
    sessionToken: session.token,
    createdAt: session.createdAt,
    context: 'move_in',
    campaignId: p.campaign_id,
    address: { street1: p.street1, street2: p.street2, city: p.city, state: p.state, zip: p.zip },
    furthestStep: 0,
    clicks: 0,
    order: null,
    cartProgression: [],
    updatedAt: session.createdAt,
    session,
  };
}

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null | undefined): string | null => (ms == null ? null : iso(ms));

/**
 * What an `analytics_campaign` fault changes: the campaign reported for sessions created through
 * the simulator (seeded history keeps its own). Undefined: no fault.
 */
export type CampaignOverride = string | null | undefined;

/** The fields both forms share. */
function sessionFields(r: AnalyticsRecord, campaign: CampaignOverride) {
  return {
    id: r.id,
    created_at: iso(r.createdAt),
    context: r.context,
    campaign_id: campaign !== undefined && r.session !== null ? campaign : r.campaignId,
    address: { ...r.address },
    furthest_step: r.furthestStep,
  };
}

/** The order fields: flat in the list form, nested under `order` in the detail form. */
function orderFields(r: AnalyticsRecord): AnalyticsSessionDetail['order'] {
  return {
    order_number: r.order?.orderNumber ?? null,
    status: r.order?.status ?? null,
    ordered_at: isoOrNull(r.order?.orderedAt),
    installed: r.order?.installed ?? null,
    installed_at: isoOrNull(r.order?.installedAt),
    commission_cents: r.order?.commissionCents ?? null,
  };
}

/** The list form of a record. */
export function toRow(r: AnalyticsRecord, campaign?: CampaignOverride): AnalyticsSessionRow {
  return { ...sessionFields(r, campaign), ...orderFields(r) };
}

/** The detail form of a record: order fields nested, with the cart progression. */
export function toDetail(r: AnalyticsRecord, campaign?: CampaignOverride): AnalyticsSessionDetail {
  return {
    ...sessionFields(r, campaign),
    order: orderFields(r),
    cart_progression: r.cartProgression.map((s) => ({
      step: s.step,
      step_name: s.stepName,
      timestamp: iso(s.at),
    })),
  };
}
