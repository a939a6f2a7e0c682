/**
 * The objectives' spec, slo/isa-monitor.sloth.yaml, in Sloth's prometheus/v1 format: one schema,
 * read by the generator that writes the objectives' rules and by `isa-monitor report`, so both
 * see the same objectives and refuse the same mistakes (docs/alerts.md, "Objectives"). Every
 * problem names its key.
 */
import { parse } from 'yaml';
import { z } from 'zod';
import { formatKeyPath } from '../config/problems.js';

export const SLO_SPEC_PATH = 'slo/isa-monitor.sloth.yaml';

/** One objective of the spec. */
export interface Objective {
  name: string;
  /** Percent, e.g. 99.5. */
  objective: number;
  description: string;
  errorQuery: string;
  totalQuery: string;
  alertName: string;
  summary: string;
  ticketSeverity: string;
}

export interface SloSpec {
  service: string;
  labels: Record<string, string>;
  slos: Objective[];
}

const PAGE_ALERT_DISABLED = 'must be disabled: the fast pages page (docs/alerts.md)';

const query = z.string().refine((text) => text.includes('{{.window}}'), {
  error: 'must be a query with a {{.window}} range',
});

const objectiveSchema = z.object({
  name: z
    .string()
    .regex(/^[a-z0-9-]+$/, { error: 'must be lower-case letters, digits and dashes' }),
  objective: z
    .number({ error: 'must be a percentage between 0 and 100' })
    .gt(0, { error: 'must be a percentage between 0 and 100' })
    .lt(100, { error: 'must be a percentage between 0 and 100' }),
  description: z.string().default(''),
  sli: z.object({
    events: z.object({ error_query: query, total_query: query }),
  }),
  alerting: z.object(
    {
      name: z.string().default('IsaSloErrorBudgetBurn'),
      annotations: z.object({ summary: z.string().default('') }).prefault({}),
      // The fast pages page sooner at one ping a minute (docs/alerts.md, "Objectives").
      page_alert: z.object(
        { disable: z.literal(true, { error: PAGE_ALERT_DISABLED }) },
        { error: PAGE_ALERT_DISABLED },
      ),
      ticket_alert: z
        .object({
          labels: z.object({ severity: z.string().default('warning') }).prefault({}),
        })
        .prefault({}),
    },
    { error: `must hold page_alert: { disable: true } (docs/alerts.md)` },
  ),
});

const specSchema = z.object({
  version: z.literal('prometheus/v1', { error: 'must be prometheus/v1' }),
  service: z.string().min(1, { error: 'must be a name' }),
  labels: z.record(z.string(), z.string()).default({}),
  slos: z.array(objectiveSchema).min(1, { error: 'must list at least one objective' }),
});

/** Parses the spec; a problem throws an Error of one line, `<source>: <key>: <message>` for each, joined by "; ". */
export function parseSloSpec(text: string, source: string): SloSpec {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new Error(`${source}: not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const parsed = specSchema.safeParse(doc ?? {});
  if (!parsed.success) {
    throw new Error(
      parsed.error.issues
        .map((issue) => `${source}: ${formatKeyPath(issue.path)}: ${issue.message}`)
        .join('; '),
    );
  }
  const spec = parsed.data;
  return {
    service: spec.service,
    labels: spec.labels,
    slos: spec.slos.map((slo) => ({
      name: slo.name,
      objective: slo.objective,
      description: slo.description,
      errorQuery: slo.sli.events.error_query,
      totalQuery: slo.sli.events.total_query,
      alertName: slo.alerting.name,
      summary: slo.alerting.annotations.summary,
      ticketSeverity: slo.alerting.ticket_alert.labels.severity,
    })),
  };
}
