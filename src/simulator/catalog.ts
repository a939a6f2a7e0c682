/**
 * The simulated provider landscape: the tracked provider list (GET /service_providers), the
 * offerings and product catalogs returned for an address, and each provider's census coverage
 * (GET /coverage). Everything is fixed data built once, with stable ids, so responses are
 * reproducible and `service_data_set` can honestly name "the data set behind the response".
 */
import type { z } from 'zod';
import type { Category, Money, Pricing, Product, ProviderOffering } from '../api/schemas.js';
import type { coverageProviderSchema, ServiceProvider } from './schemas.js';
import { COVERAGE_COUNTIES } from './geography.js';
import { hash32, stableUuid } from './random.js';

interface TechnologyDef {
  technology: 'Cable' | 'Fiber' | 'Fixed Wireless' | 'DSL';
  down: number;
  up: number;
}

interface PlanDef {
  sku: string;
  name: string;
  technology: 'cable' | 'fiber' | 'fixed_wireless' | 'dsl';
  down: number;
  up: number;
  /** List price per month in cents, before discounts. */
  grossCents: number;
  /** Promotional discount per month during the initial term. */
  initialDiscountCents: number;
  dataLimit: string;
  contract: boolean;
  modemIncluded: boolean;
  promo?: string;
}

interface AddOnDef {
  sku: string;
  name: string;
  description: string;
  monthlyCents: number;
  maxQuantity: number;
  requiredWith?: 'all-cable';
  includedWithTop?: boolean;
  onlyWithTop?: boolean;
}

interface ProviderDef {
  id: string;
  name: string;
  fccName: string;
  units: number;
  type: ServiceProvider['type'];
  /** Inactive providers stay in the tracked list but serve no addresses. */
  active: boolean;
  slug: string;
  telephone: string;
  technologies: TechnologyDef[];
  plans: PlanDef[];
  addOns: AddOnDef[];
  /** Some providers publish no catalog through the API: `product_catalog` comes back empty. */
  emptyCatalog: boolean;
  /** `third_term_discount` is absent from some responses; these providers never send it. */
  thirdTermDiscount: boolean;
  promo: string | null;
  /** Counties (5-digit FIPS) served, and how many of each county's tracts (1-3). */
  coverage: Array<[string, number]>;
}

type CoverageProvider = z.infer<typeof coverageProviderSchema>;

const ASSETS = 'https://assets.isa-sim.example';
const CHECKOUT = 'https://checkout.isa-sim.example';

// prettier-ignore
const PROVIDERS: ProviderDef[] = [
  {
    id: '100231',
    name: 'Summit Broadband',
    fccName: 'Summit Communications, LLC',
    units: 18_400_000,
    type: 'fcc_provider',
    active: true,
    slug: 'summit',
    telephone: '(800) 555-0141',
    technologies: [
      { technology: 'Cable', down: 1200, up: 35 },
      { technology: 'Fiber', down: 2000, up: 2000 },
    ],
    plans: [
      plan('SUM-CBL-300', 'Summit Connect 300', 'cable', 300, 20, 6500, 2000, '1.2 TB', false, false),
      plan('SUM-CBL-800', 'Summit Connect 800', 'cable', 800, 35, 8500, 2500, '1.2 TB', false, false),
      plan('SUM-FIB-1G', 'Summit Fiber 1 Gig', 'fiber', 1000, 1000, 9000, 2000, 'Unlimited', false, true, 'First 12 months at $70/mo'),
      plan('SUM-FIB-2G', 'Summit Fiber 2 Gig', 'fiber', 2000, 2000, 12000, 2500, 'Unlimited', false, true),
    ],
    addOns: [
      { sku: 'SUM-MODEM', name: 'Cable modem rental', description: 'DOCSIS 3.1 modem with built-in WiFi 6 router.', monthlyCents: 1500, maxQuantity: 1, requiredWith: 'all-cable' },
      { sku: 'SUM-XFI-POD', name: 'WiFi extender pod', description: 'Extends WiFi coverage to more rooms.', monthlyCents: 500, maxQuantity: 3, includedWithTop: true },
    ],
    emptyCatalog: false,
    thirdTermDiscount: true,
    promo: 'Save $20/mo for 12 months with autopay',
    coverage: [['08031', 3], ['08005', 2], ['08059', 2], ['17031', 3], ['13121', 2], ['42101', 3], ['12086', 1]],
  },
  {
    id: '100231-1',
    name: 'Summit Fiber Home',
    fccName: 'Summit Communications, LLC',
    units: 18_400_000,
    type: 'supplemental_brand',
    active: true,
    slug: 'summit-fiber-home',
    telephone: '(800) 555-0142',
    technologies: [{ technology: 'Fiber', down: 1000, up: 1000 }],
    plans: [],
    addOns: [],
    emptyCatalog: true,
    thirdTermDiscount: false,
    promo: null,
    coverage: [['08031', 1], ['17031', 1]],
  },
  {
    id: '104518',
    name: 'Riverline Cable',
    fccName: 'Riverline Cable Holdings, Inc.',
    units: 12_900_000,
    type: 'fcc_provider',
    active: true,
    slug: 'riverline',
    telephone: '(888) 555-0177',
    technologies: [{ technology: 'Cable', down: 1000, up: 50 }],
    plans: [
      plan('RIV-CBL-200', 'Riverline Essentials 200', 'cable', 200, 10, 5000, 1000, '1 TB', false, false),
      plan('RIV-CBL-500', 'Riverline Fast 500', 'cable', 500, 20, 7000, 2000, 'Unlimited', true, false, '$50/mo for 24 months with 2-year agreement'),
      plan('RIV-CBL-1G', 'Riverline Gig', 'cable', 1000, 50, 9500, 2500, 'Unlimited', true, true),
    ],
    addOns: [
      { sku: 'RIV-MODEM', name: 'Riverline WiFi gateway', description: 'Gateway rental; required for Riverline internet plans.', monthlyCents: 1400, maxQuantity: 1, requiredWith: 'all-cable' },
      { sku: 'RIV-SECURE', name: 'Riverline Secure', description: 'Network security for every connected device.', monthlyCents: 600, maxQuantity: 1, onlyWithTop: true },
    ],
    emptyCatalog: false,
    thirdTermDiscount: false,
    promo: null,
    coverage: [['08031', 2], ['36061', 3], ['36047', 3], ['06037', 3], ['48201', 2], ['53033', 2]],
  },
  {
    id: '104518-2',
    name: 'Riverline Xpress',
    fccName: 'Riverline Cable Holdings, Inc.',
    units: 12_900_000,
    type: 'supplemental_brand',
    active: true,
    slug: 'riverline-xpress',
    telephone: '(888) 555-0178',
    technologies: [{ technology: 'Cable', down: 300, up: 10 }],
    plans: [
      plan('RVX-CBL-100', 'Xpress Prepaid 100', 'cable', 100, 10, 4500, 0, 'Unlimited', false, true),
      plan('RVX-CBL-300', 'Xpress Prepaid 300', 'cable', 300, 10, 5500, 0, 'Unlimited', false, true),
    ],
    addOns: [],
    emptyCatalog: false,
    thirdTermDiscount: false,
    promo: 'No annual contract, no credit check',
    coverage: [['36047', 2], ['06037', 2]],
  },
  {
    id: '109876',
    name: 'Beacon Fiber',
    fccName: 'Beacon Telecom Corp.',
    units: 7_300_000,
    type: 'fcc_provider',
    active: true,
    slug: 'beacon',
    telephone: '(877) 555-0199',
    technologies: [{ technology: 'Fiber', down: 5000, up: 5000 }],
    plans: [
      plan('BCN-FIB-500', 'Beacon Fiber 500', 'fiber', 500, 500, 5500, 0, 'Unlimited', false, true),
      plan('BCN-FIB-1G', 'Beacon Fiber 1 Gig', 'fiber', 1000, 1000, 7500, 1000, 'Unlimited', false, true, 'Free installation this month'),
      plan('BCN-FIB-5G', 'Beacon Fiber 5 Gig', 'fiber', 5000, 5000, 15500, 0, 'Unlimited', false, true),
    ],
    addOns: [
      { sku: 'BCN-MESH', name: 'Whole-home WiFi', description: 'Mesh WiFi system for larger homes.', monthlyCents: 1000, maxQuantity: 1, includedWithTop: true },
    ],
    emptyCatalog: false,
    thirdTermDiscount: true,
    promo: 'Free installation this month',
    coverage: [['08031', 1], ['48453', 3], ['06075', 3], ['53033', 3], ['13121', 3]],
  },
  {
    id: '112340',
    name: 'Keystone Net',
    fccName: 'Keystone Networks, Inc.',
    units: 3_100_000,
    type: 'fcc_provider',
    active: true,
    slug: 'keystone',
    telephone: '(866) 555-0123',
    technologies: [
      { technology: 'DSL', down: 100, up: 10 },
      { technology: 'Fiber', down: 940, up: 880 },
    ],
    plans: [],
    addOns: [],
    emptyCatalog: true,
    thirdTermDiscount: false,
    promo: null,
    coverage: [['42101', 2], ['17031', 1], ['36061', 1], ['48201', 3]],
  },
  {
    id: '118002',
    name: 'Prairie Sky Wireless',
    fccName: 'Prairie Sky Communications LLC',
    units: 640_000,
    type: 'fcc_provider',
    active: true,
    slug: 'prairie-sky',
    telephone: '(855) 555-0110',
    technologies: [{ technology: 'Fixed Wireless', down: 300, up: 50 }],
    plans: [
      plan('PSW-FW-100', 'Prairie Sky 100', 'fixed_wireless', 100, 20, 5500, 0, 'Unlimited', false, true),
      plan('PSW-FW-300', 'Prairie Sky 300', 'fixed_wireless', 300, 50, 7500, 500, 'Unlimited', false, true),
    ],
    addOns: [],
    emptyCatalog: false,
    thirdTermDiscount: false,
    promo: null,
    coverage: [['08005', 3], ['08059', 3], ['48453', 1]],
  },
  {
    id: '120455',
    name: 'Harbor Connect',
    fccName: 'Harbor Communications Group',
    units: 85_000,
    type: 'fcc_provider',
    active: false,
    slug: 'harbor',
    telephone: '(844) 555-0188',
    technologies: [{ technology: 'Cable', down: 150, up: 10 }],
    plans: [],
    addOns: [],
    emptyCatalog: true,
    thirdTermDiscount: false,
    promo: null,
    coverage: [],
  },
  {
    id: '121010',
    name: 'Old Mill DSL',
    fccName: 'Old Mill Telephone Company',
    units: 12_000,
    type: 'fcc_provider',
    active: false,
    slug: 'old-mill',
    telephone: '(833) 555-0155',
    technologies: [{ technology: 'DSL', down: 25, up: 3 }],
    plans: [],
    addOns: [],
    emptyCatalog: true,
    thirdTermDiscount: false,
    promo: null,
    coverage: [],
  },
];

function plan(
  sku: string,
  name: string,
  technology: PlanDef['technology'],
  down: number,
  up: number,
  grossCents: number,
  initialDiscountCents: number,
  dataLimit: string,
  contract: boolean,
  modemIncluded: boolean,
  promo?: string,
): PlanDef {
  return {
    sku,
    name,
    technology,
    down,
    up,
    grossCents,
    initialDiscountCents,
    dataLimit,
    contract,
    modemIncluded,
    ...(promo ? { promo } : {}),
  };
}

const usd = (amount_cents: number): Money => ({ amount_cents, currency: 'USD' });

function planPricing(p: PlanDef, withThird: boolean): Pricing {
  const autopay = 500;
  const paperless = p.grossCents >= 7000 ? 200 : 0;
  const net = p.grossCents - p.initialDiscountCents - autopay - paperless;
  return {
    extra_data_fee: usd(p.dataLimit === 'Unlimited' ? 0 : 1000),
    professional_installation_fee: usd(p.technology === 'fiber' ? 0 : 9999),
    self_installation_fee: usd(p.technology === 'fiber' ? 0 : 1500),
    activation_fee: usd(p.contract ? 0 : 1000),
    initial_term_discount: usd(p.initialDiscountCents),
    second_term_discount: usd(Math.round(p.initialDiscountCents / 2)),
    ...(withThird ? { third_term_discount: usd(0) } : {}),
    autopay_discount: usd(autopay),
    paperless_billing_discount: usd(paperless),
    combined_autopay_paperless_discount: usd(autopay + paperless),
    net_monthly_price: usd(net),
    gross_monthly_fee: usd(p.grossCents),
  };
}

function addOnPricing(a: AddOnDef, withThird: boolean): Pricing {
  const zero = usd(0);
  return {
    extra_data_fee: zero,
    professional_installation_fee: zero,
    self_installation_fee: zero,
    activation_fee: zero,
    initial_term_discount: zero,
    second_term_discount: zero,
    ...(withThird ? { third_term_discount: zero } : {}),
    autopay_discount: zero,
    paperless_billing_discount: zero,
    combined_autopay_paperless_discount: zero,
    net_monthly_price: usd(a.monthlyCents),
    gross_monthly_fee: usd(a.monthlyCents),
  };
}

function buildCatalog(def: ProviderDef): Category[] {
  if (def.emptyCatalog || def.plans.length === 0) return [];
  const categories: Category[] = [
    {
      category: 'internet',
      category_name: 'Internet',
      category_description: `${def.name} internet plans available at this address.`,
      products: def.plans.map((p, i) => planProduct(def, p, i)),
    },
  ];
  if (def.addOns.length > 0) {
    categories.push({
      category: 'internet_add_on',
      category_name: 'Internet add-ons',
      category_description: 'Equipment and services to go with your plan.',
      products: def.addOns.map((a, i) => addOnProduct(def, a, i)),
    });
  }
  return categories;
}

/** An internet plan as a product of the catalog, at its `index` in the provider's plans. */
function planProduct(def: ProviderDef, p: PlanDef, index: number): Product {
  return {
    id: stableUuid(`product:${p.sku}`),
    sku: p.sku,
    name: p.name,
    category: 'internet',
    category_name: 'Internet',
    technology: p.technology,
    position: index + 1,
    select_type: 'radio',
    description: `Download speeds up to ${p.down} Mbps and upload speeds up to ${p.up} Mbps.`,
    download_speed: `${p.down} Mbps`,
    upload_speed: `${p.up} Mbps`,
    data_limit: p.dataLimit,
    channel_count: 0,
    streaming_apps: [],
    is_required_to_checkout: false,
    is_contract_required: p.contract,
    is_modem_router_included: p.modemIncluded,
    is_bundle_qualifier: p.down >= 1000,
    bundle_discounts: p.down >= 1000 ? { mobile: usd(1000) } : {},
    is_local_checkout: true,
    required_with_plans: [],
    included_with_plans: [],
    only_available_with_plans: [],
    initial_term_discount_months: p.initialDiscountCents > 0 ? 12 : 0,
    second_term_discount_months: p.initialDiscountCents > 0 ? 12 : null,
    service_rank: index + 1,
    max_quantity: 1,
    product_promo: p.promo ? { promo_text: p.promo } : {},
    info: p.contract
      ? 'Requires a 24-month agreement. Prices exclude taxes and fees.'
      : 'No annual contract. Prices exclude taxes and fees.',
    pricing: planPricing(p, def.thirdTermDiscount),
  };
}

/**
 * An add-on as a product of the catalog, tied to the plans it goes with: required with every
 * cable plan, or included with or only available with the top plan.
 */
function addOnProduct(def: ProviderDef, a: AddOnDef, index: number): Product {
  const cableSkus = def.plans.filter((p) => p.technology === 'cable').map((p) => p.sku);
  const topSku = def.plans[def.plans.length - 1]?.sku;
  return {
    id: stableUuid(`product:${a.sku}`),
    sku: a.sku,
    name: a.name,
    category: 'internet_add_on',
    category_name: 'Internet add-ons',
    technology: 'not_applicable',
    position: index + 1,
    select_type: 'radio',
    description: a.description,
    download_speed: null,
    upload_speed: null,
    data_limit: 'Not applicable',
    channel_count: 0,
    streaming_apps: [],
    is_required_to_checkout: a.requiredWith === 'all-cable',
    is_contract_required: false,
    is_modem_router_included: false,
    is_bundle_qualifier: false,
    bundle_discounts: {},
    is_local_checkout: true,
    required_with_plans: a.requiredWith === 'all-cable' ? cableSkus : [],
    included_with_plans: a.includedWithTop && topSku ? [topSku] : [],
    only_available_with_plans: a.onlyWithTop && topSku ? [topSku] : [],
    initial_term_discount_months: 0,
    second_term_discount_months: null,
    service_rank: null,
    max_quantity: a.maxQuantity,
    product_promo: {},
    info: 'Billed monthly with your internet plan.',
    pricing: addOnPricing(a, def.thirdTermDiscount),
  };
}

/** An offering as stored: everything except the per-session checkout link and creation extras. */
type OfferingTemplate = Omit<ProviderOffering, 'url' | 'security_token' | 'buyflow_type'>;

function buildOfferingTemplate(def: ProviderDef): OfferingTemplate {
  const catalog = buildCatalog(def);
  const planPrices = catalog
    .filter((c) => c.category === 'internet')
    .flatMap((c) => c.products.map((p) => p.pricing.net_monthly_price.amount_cents));
  // Providers without a published catalog still advertise a starting price.
  const minPrice = planPrices.length > 0 ? Math.min(...planPrices) : 4000 + (hash32(def.id) % 3000);
  const promo = def.promo
    ? { promo_text: def.promo, promo_logo_url: `${ASSETS}/promos/${def.slug}.png` }
    : {};
  return {
    provider_id: def.id,
    provider_name: def.name,
    provider_icon: def.type === 'fcc_provider' ? `${ASSETS}/icons/${def.slug}.svg` : null,
    provider_logo: `${ASSETS}/logos/${def.slug}.png`,
    telephone: def.telephone,
    button_label: def.emptyCatalog ? 'Call to order' : 'Order online',
    min_plan_price: usd(minPrice),
    provider_promo: promo,
    url_promo: def.promo ? { ...promo } : {},
    offerings: def.technologies.map((t) => ({
      technology: t.technology,
      max_download_speed: t.down,
      max_upload_speed: t.up,
    })),
    product_catalog: catalog,
  };
}

const ACTIVE = PROVIDERS.filter((p) => p.active);
const TEMPLATES = new Map(ACTIVE.map((p) => [p.id, buildOfferingTemplate(p)]));

/** Ids of providers that can serve addresses, in catalog order. */
export const ACTIVE_PROVIDER_IDS: readonly string[] = ACTIVE.map((p) => p.id);

/**
 * The providers serving a building: a stable, hash-chosen subset of two to four active providers,
 * always including one with a full catalog so most answers have plans to show.
 */
export function providersForBuilding(buildingKey: string): string[] {
  const h = hash32(`providers:${buildingKey}`);
  const withCatalog = ACTIVE.filter((p) => !p.emptyCatalog);
  const anchor = withCatalog[h % withCatalog.length];
  const count = 2 + ((h >>> 8) % 3);
  const rest = ACTIVE.filter((p) => p !== anchor);
  const chosen = new Set<string>(anchor ? [anchor.id] : []);
  for (let i = 0; chosen.size < count && i < rest.length; i++) {
    const candidate = rest[((h >>> 12) + i * 7) % rest.length];
    if (candidate) chosen.add(candidate.id);
  }
  return ACTIVE_PROVIDER_IDS.filter((id) => chosen.has(id));
}

export interface OfferingOptions {
  sessionToken: string;
  /** Creation responses served from the recent-lookup cache carry checkout extras. */
  withCheckoutExtras: boolean;
}

/** The provider offerings (`data` array) for a list of provider ids. */
export function offeringsFor(
  providerIds: readonly string[],
  opts: OfferingOptions,
): ProviderOffering[] {
  return providerIds.flatMap((id) => {
    const template = TEMPLATES.get(id);
    if (!template) return [];
    const def = ACTIVE.find((p) => p.id === id);
    const offering: ProviderOffering = {
      ...template,
      url: `${CHECKOUT}/${def?.slug ?? id}?session=${encodeURIComponent(opts.sessionToken)}`,
    };
    if (opts.withCheckoutExtras) {
      offering.security_token = stableUuid(`security:${opts.sessionToken}:${id}`).replace(/-/g, '');
      offering.buyflow_type = template.product_catalog.length > 0 ? 'local_checkout' : 'phone';
    }
    return [offering];
  });
}

/**
 * The tracked provider list, ordered as the spec says: by total residential units, largest first,
 * each supplemental brand right after its parent (it repeats the parent's fcc_name and units).
 */
export function serviceProviderList(): ServiceProvider[] {
  const parents = PROVIDERS.filter((p) => p.type === 'fcc_provider').sort(
    (a, b) => b.units - a.units || a.name.localeCompare(b.name),
  );
  return parents
    .flatMap((parent) => [
      parent,
      ...PROVIDERS.filter((p) => p.type === 'supplemental_brand' && p.fccName === parent.fccName),
    ])
    .map((p) => ({
      id: p.id,
      name: p.name,
      fcc_name: p.fccName,
      total_residential_units: p.units,
      type: p.type,
    }));
}

/** A provider's coverage: the census blocks it serves. */
export interface ProviderCoverage {
  providerId: string;
  blocks: string[];
}

/** Census blocks served by each active provider. */
export const PROVIDER_COVERAGE: readonly ProviderCoverage[] = ACTIVE.map((p) => ({
  providerId: p.id,
  blocks: p.coverage.flatMap(([countyFips, tractCount]) => {
    const county = COVERAGE_COUNTIES.find((c) => c.fips === countyFips);
    if (!county) throw new Error(`provider ${p.id} covers unknown county ${countyFips}`);
    const tracts = county.tracts.slice(0, tractCount);
    return county.blocks.filter((b) => tracts.some((t) => b.startsWith(t)));
  }),
}));

/** Name, logo, contact and technology offerings of a provider, for the coverage response. */
export function coverageProviderInfo(providerId: string): Omit<CoverageProvider, 'matched_areas'> {
  const template = TEMPLATES.get(providerId);
  const def = ACTIVE.find((p) => p.id === providerId);
  if (!template || !def) throw new Error(`unknown provider ${providerId}`);
  return {
    provider_id: template.provider_id,
    provider_name: template.provider_name,
    provider_logo: template.provider_logo,
    telephone: template.telephone,
    url: `https://www.${def.slug}.isa-sim.example/`,
    offerings: template.offerings,
  };
}
