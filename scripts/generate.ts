/**
 * The one generator: writes every file of this repository that is derived from another, in one
 * process, each stage handed what the stage before it produced (not what is committed), so one
 * run is consistent however many sources changed:
 *
 * 1. the rules (alerts/isa-monitor.rules.yaml) from alerts/src/ and each check's rules.yaml
 *    (scripts/rules/assemble-rules.ts);
 * 2. the promtool rule tests (alerts/tests/*.yaml) from the scenarios and those rules;
 * 3. the dashboards (dashboards/*.json) from dashboards/src;
 * 4. the Kubernetes objects made from the rules and dashboards (deploy/kubernetes/base/);
 * 5. the tables of docs/metrics.md, docs/configuration.md and docs/alerts.md that repeat the
 *    metric catalog, the checks' config sections and the rules, and the sections of
 *    docs/runbooks.md each check keeps in its `runbook.md` (scripts/docs/render-docs.ts), between
 *    their marker comments; the prose around them stays hand-written.
 *
 *   npm run generate               write every file that differs
 *   npm run generate -- --check    write nothing; list the stale files and exit 1 if any
 *
 * test/build/generated.test.ts runs the check mode, so CI fails while a generated file is stale
 * (docs/architecture.md, "Generated files").
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { renderAllDashboards, DASHBOARDS_DIR } from '../dashboards/src/index.js';
import { renderAll as renderDeploy } from './deploy/render.js';
import { renderDocs } from './docs/render-docs.js';
import { assembleRules } from './rules/assemble-rules.js';
import {
  GENERATED_MARK,
  REPO_ROOT,
  RULES_PATH,
  TESTS_DIR,
  generateAll as generateRuleTests,
} from './rules/gen-rule-tests.js';
import { runGenerator, writeGenerated, type GeneratedText } from './write-generated.js';

/** The command that rewrites every generated file, as the stale-file messages print it. */
export const REGENERATE_COMMAND = 'npm run generate';

/** Every generated file with the text the generator writes to it, in generation order. */
export async function generateEverything(): Promise<GeneratedText[]> {
  const rulesText = assembleRules(REPO_ROOT);
  const ruleTests = await generateRuleTests(REPO_ROOT, rulesText);
  const dashboards = await renderAllDashboards();
  const deploy = await renderDeploy({ rulesText, dashboards });
  const docs = await renderDocs({ repoRoot: REPO_ROOT, rulesText });
  return [
    { target: path.join(REPO_ROOT, RULES_PATH), text: rulesText },
    ...[...ruleTests].map(([file, text]) => ({ target: path.join(REPO_ROOT, file), text })),
    ...dashboards.map(({ file, text }) => ({ target: path.join(DASHBOARDS_DIR, file), text })),
    ...[...deploy, ...docs].map(({ file, text }) => ({ target: path.join(REPO_ROOT, file), text })),
  ];
}

/**
 * Generated rule tests that no scenario writes any more: a check removed with its folder leaves
 * its alerts/tests/<scenario>.yaml behind, which would then test alerts that no longer exist.
 */
export function orphanedFiles(
  generated: readonly GeneratedText[],
  dir = path.join(REPO_ROOT, TESTS_DIR),
): string[] {
  const written = new Set(generated.map(({ target }) => target));
  return readdirSync(dir)
    .filter((name) => name.endsWith('.yaml'))
    .map((name) => path.join(dir, name))
    .filter(
      (file) => !written.has(file) && readFileSync(file, 'utf8').startsWith(`# ${GENERATED_MARK}`),
    );
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  runGenerator(async () => {
    const generated = await generateEverything();
    return writeGenerated(generated, {
      check: process.argv.includes('--check'),
      regenerate: REGENERATE_COMMAND,
      orphans: orphanedFiles(generated),
    });
  });
}
