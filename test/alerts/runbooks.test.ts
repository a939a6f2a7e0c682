/**
 * docs/runbooks.md and docs/alerts.md: every alert's runbook_url anchor resolves to a heading
 * under GitHub's anchor rules, and each runbook has Meaning, Impact, Diagnosis and Mitigation.
 * docs/alerts.md lists every rule in a table `npm run generate` writes from the rules file, and
 * docs/runbooks.md holds the sections each check keeps in its folder's `runbook.md`
 * (test/build/generated.test.ts keeps both current). A check's `runbook.md` has exactly the
 * sections of its own `rules.yaml`'s alerts (docs/architecture.md, "Adding a check").
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { checkRunbookPath } from '../../scripts/docs/render-docs.js';
import { checkRulesPath } from '../../scripts/rules/assemble-rules.js';
import { REPO_ROOT } from '../../scripts/rules/gen-rule-tests.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { CONTRACT_ALERTS, RUNBOOK_BASE, alertRules, type Rule } from './rules-file.js';

interface Heading {
  level: number;
  text: string;
  anchor: string;
}

/**
 * GitHub's heading anchors (github-slugger): inline markup reduced to its text, lower case,
 * punctuation dropped, spaces to hyphens, repeats numbered -1, -2, ...
 */
function githubAnchors(markdown: string): Heading[] {
  const seen = new Map<string, number>();
  const headings: Heading[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const text = (m[2] ?? '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    headings.push({
      level: m[1]?.length ?? 0,
      text,
      anchor: count === 0 ? base : `${base}-${count}`,
    });
  }
  return headings;
}

const runbooks = readFileSync(join(REPO_ROOT, 'docs/runbooks.md'), 'utf8');
const headings = githubAnchors(runbooks);

describe('githubAnchors', () => {
  it('follows GitHub: lower case, punctuation dropped, spaces to hyphens, repeats numbered', () => {
    const anchors = githubAnchors(
      '# IsaApiDown\n## What `up == 0` means?\n## Meaning\n## Meaning\n```\n# not a heading\n```',
    );
    expect(anchors.map((h) => h.anchor)).toEqual([
      'isaapidown',
      'what-up--0-means',
      'meaning',
      'meaning-1',
    ]);
  });
});

describe('docs/runbooks.md', () => {
  it('has a heading for every runbook_url anchor', () => {
    const anchors = new Set(headings.map((h) => h.anchor));
    for (const rule of alertRules) {
      const url = rule.annotations?.['runbook_url'] ?? '';
      expect(url.startsWith(`${RUNBOOK_BASE}#`), `${rule.alert}: ${url}`).toBe(true);
      const anchor = url.slice(RUNBOOK_BASE.length + 1);
      expect(
        anchors.has(anchor),
        `${rule.alert}: #${anchor} is no heading of docs/runbooks.md`,
      ).toBe(true);
    }
  });

  it('has one section per alert, each with Meaning, Impact, Diagnosis and Mitigation', () => {
    const sections = headings.filter((h) => h.level === 2).map((h) => h.text);
    // Each alert once; their order is the page's (the checks' in registry order, then the
    // hand-written ones), not the rules'.
    expect(new Set(sections).size).toBe(sections.length);
    expect([...sections].sort()).toEqual(Object.keys(CONTRACT_ALERTS).sort());
    headings.forEach((h, i) => {
      if (h.level !== 2) return;
      const next = headings.slice(i + 1);
      const end = next.findIndex((x) => x.level <= 2);
      const subsections = (end === -1 ? next : next.slice(0, end)).map((x) => x.text);
      expect(subsections, h.text).toEqual(['Meaning', 'Impact', 'Diagnosis', 'Mitigation']);
    });
  });

  it('tells on-call how to check by hand and what to hand to the API operator', () => {
    expect(runbooks).toContain(
      'isa-monitor check ping --config /etc/isa-monitor/config.yaml --environment',
    );
    expect(runbooks).toContain(
      'isa-monitor check lifecycle --config /etc/isa-monitor/config.yaml --environment',
    );
    expect(runbooks).toContain('--json');
    expect(runbooks).toContain('request_id');
  });

  it('gives PromQL in the diagnosis of every alert but Watchdog', () => {
    const sections = runbooks.split(/^## /m).slice(1);
    for (const section of sections) {
      const name = section.split('\n')[0] ?? '';
      if (name === 'Watchdog') continue;
      const diagnosis = section.split('### Diagnosis')[1]?.split('### Mitigation')[0] ?? '';
      expect(diagnosis, name).toMatch(/```promql\n[\s\S]+?```/);
    }
  });
});

/** The text of a file of the repository, or '' when there is none. */
function readOptional(file: string): string {
  const target = join(REPO_ROOT, file);
  return existsSync(target) ? readFileSync(target, 'utf8') : '';
}

/** Each registered check's alerts (its `rules.yaml`) and runbook sections (its `runbook.md`). */
const checkRunbooks = CHECK_LIST.map(({ name }) => {
  const rules = YAML.parse(readOptional(checkRulesPath(name))) as {
    groups?: Array<{ rules: Rule[] }>;
  } | null;
  const alerts = new Set(
    (rules?.groups ?? []).flatMap((g) => g.rules.flatMap((r) => (r.alert ? [r.alert] : []))),
  );
  const runbook = githubAnchors(readOptional(checkRunbookPath(name)));
  return { name, alerts, runbook };
});

describe("each check's runbook.md", () => {
  it.each(checkRunbooks)('$name: has a section for every alert of its rules.yaml', (check) => {
    const sections = check.runbook.filter((h) => h.level === 2).map((h) => h.text);
    for (const alert of check.alerts) {
      expect(sections, `${alert}: no section in ${checkRunbookPath(check.name)}`).toContain(alert);
    }
  });

  it.each(checkRunbooks)('$name: has no section for an alert that is not its own', (check) => {
    for (const h of check.runbook) {
      if (h.level !== 2 || check.alerts.has(h.text)) continue;
      const owner = checkRunbooks.find((other) => other.alerts.has(h.text))?.name;
      const whose = owner === undefined ? 'no check' : `${checkRulesPath(owner)}`;
      expect.fail(
        `${checkRunbookPath(check.name)}: section ${h.text} belongs to ${whose}, not ${checkRulesPath(check.name)}`,
      );
    }
  });

  it('uses section headings only: no page title, every alert once', () => {
    for (const check of checkRunbooks) {
      expect(
        check.runbook.filter((h) => h.level === 1),
        check.name,
      ).toEqual([]);
      const sections = check.runbook.filter((h) => h.level === 2).map((h) => h.text);
      expect(new Set(sections).size, check.name).toBe(sections.length);
    }
  });
});
