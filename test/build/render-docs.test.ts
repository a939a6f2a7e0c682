/**
 * The docs stage of the generator (scripts/docs/render-docs.ts): it rewrites only the text between
 * its markers, and it refuses what would leave a page silently incomplete. That the committed
 * pages are current is test/build/generated.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pingCheck } from '../../src/checks/ping/index.js';
import type { AnyCheck } from '../../src/kernel/check.js';
import type { KeyDoc } from '../../src/kernel/section.js';
import {
  alertsTable,
  checkRunbookPath,
  checkRunbooks,
  configTable,
  replaceBlock,
  startMarker,
} from '../../scripts/docs/render-docs.js';

/** The ping check with its section's key docs replaced. */
function pingWithKeyDocs(keys: Record<string, KeyDoc>): AnyCheck {
  const config = { ...pingCheck.config, docs: { ...pingCheck.config.docs, keys } };
  return { ...pingCheck, config } as unknown as AnyCheck;
}

describe('replaceBlock', () => {
  it('rewrites the text between the markers and keeps the prose around them', () => {
    const page = `# Title\n\nBefore.\n\n${startMarker('x')}\n\nold\n\n<!-- end generated -->\n\nAfter.\n`;
    expect(replaceBlock(page, 'x', 'new')).toBe(
      `# Title\n\nBefore.\n\n${startMarker('x')}\n\nnew\n\n<!-- end generated -->\n\nAfter.\n`,
    );
  });

  it('refuses a page without the block', () => {
    expect(() => replaceBlock('# Title\n', 'x', 'new')).toThrow(/no block/);
  });
});

describe('configTable', () => {
  it('refuses a key of the schema without docs, and docs of a key the schema lacks', () => {
    const { connection: _dropped, ...keys } = pingCheck.config.docs.keys;
    expect(() => configTable([pingWithKeyDocs(keys)])).toThrow(/ping\.connection: no docs/);
    const extra = { ...pingCheck.config.docs.keys, colour: { type: 'string' } };
    expect(() => configTable([pingWithKeyDocs(extra)])).toThrow(/does not have: colour/);
  });

  it("derives the uniform keys' rows from the section's defaults", () => {
    const table = configTable([pingCheck]);
    expect(table).toContain(
      "| `environments[].ping.request_timeout` | duration | `ping.timeout` | greater than 0, not longer than `ping.timeout`; the ping request's timeout |",
    );
  });
});

describe('alertsTable', () => {
  it('gives each rule a row, its runbook as a link into docs/runbooks.md', () => {
    const rules = `groups:
  - name: g
    rules:
      - record: r
        expr: vector(1)
      - alert: A
        expr: vector(1)
        for: 2m
        labels: { severity: critical, pings: scheduled }
        annotations:
          summary: Something | else.
          runbook_url: https://example.invalid/blob/main/docs/runbooks.md#a
`;
    expect(alertsTable(rules).split('\n').slice(2)).toEqual([
      '| `A` | critical | `pings="scheduled"` | `2m` |  | Something \\| else. | [runbook](runbooks.md#a) |',
    ]);
  });
});

describe('checkRunbooks', () => {
  it("joins the checks' runbook.md in the order given, skipping a check without one", () => {
    const root = mkdtempSync(path.join(tmpdir(), 'runbooks-'));
    const write = (name: string, text: string) => {
      const file = path.join(root, checkRunbookPath(name));
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
    };
    write('b', '## B\n\n### Meaning\n\nb.\n');
    write('a', '\n## A\n\n### Meaning\n\na.\n\n');
    const checks = ['b', 'none', 'a'].map((name) => ({ name }) as unknown as AnyCheck);
    expect(checkRunbooks(root, checks)).toBe(
      '## B\n\n### Meaning\n\nb.\n\n## A\n\n### Meaning\n\na.',
    );
    rmSync(root, { recursive: true, force: true });
  });
});
