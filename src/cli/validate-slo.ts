import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { readSloSpecs, sloId } from '../report/sloth-spec.js';
import { COMMAND_USAGE } from './usage.js';
import { EXIT, parse, UsageError, type CliIO } from './io.js';

/**
 * `isa-monitor validate-slo FILE...` (docs/cli.md, "validate-slo"): every problem of every file,
 * with its document and key; an objective defined in two files is a problem, as Sloth reads the
 * files it is given together.
 */
export function validateSloCommand(args: string[], io: CliIO): number {
  const { values, positionals } = parse(args, { help: { type: 'boolean' } }, true);
  if (values.help) {
    io.out(COMMAND_USAGE['validate-slo'] ?? '');
    return EXIT.ok;
  }
  if (positionals.length === 0) throw new UsageError('validate-slo needs at least one FILE');
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const file of positionals) {
    let text: string;
    try {
      text = readFileSync(resolve(io.cwd, file), 'utf8');
    } catch (err) {
      problems.push(`${file}: cannot read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
      continue;
    }
    const read = readSloSpecs(text, file);
    problems.push(...read.problems);
    for (const warning of read.warnings) io.err(`warning: ${warning}`);
    for (const spec of read.specs) {
      for (const slo of spec.slos) {
        const id = sloId(spec, slo);
        const first = seen.get(id);
        if (first !== undefined)
          problems.push(`${file}: objective ${id} is already defined in ${first}`);
        else seen.set(id, file);
      }
      io.out(
        `${file}: ${spec.service}: ${spec.slos.map((s) => `${s.name} (${s.sli.kind})`).join(', ')}`,
      );
    }
  }
  if (problems.length > 0) {
    io.err(`${problems.length} problem(s)`);
    for (const problem of problems) io.err(problem);
    return EXIT.usage;
  }
  io.out(`valid: ${seen.size} objective(s) in ${positionals.length} file(s)`);
  return EXIT.ok;
}
