/**
 * docs/runbooks.md and docs/alerts.md: every alert's runbook_url anchor resolves to a heading
 * under GitHub's anchor rules, and each runbook has Meaning, Impact, Diagnosis and Mitigation.
 * docs/alerts.md lists every rule in a table `npm run generate` writes from the rules file
 * (test/build/generated.test.ts keeps it current).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../scripts/rules/gen-rule-tests.js';
import { CONTRACT_ALERTS, RUNBOOK_BASE, alertRules } from './rules-file.js';

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
    // Each alert once; their order is the runbook's (by what is affected), not the rules'.
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
