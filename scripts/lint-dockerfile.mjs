// Lints a Dockerfile (default: the repository's) with dockerfile-utils, the validator behind the
// Dockerfile language server: instructions, arguments, flags and their values as Docker's builder
// reads them. Every diagnostic fails, warnings included (the command-line tool of the package
// exits 0 on warnings). Prints `file:line:column: severity: message` per diagnostic.
import { readFileSync } from 'node:fs';
import { validate } from 'dockerfile-utils';

const SEVERITY = { 1: 'error', 2: 'warning', 3: 'information', 4: 'hint' };

const file = process.argv[2] ?? 'Dockerfile';
// Its defaults: errors for what the builder rejects, warnings for what it accepts but ignores
// (a second CMD or HEALTHCHECK, MAINTAINER, wrong casing); both fail here.
const diagnostics = validate(readFileSync(file, 'utf8'));
for (const d of diagnostics) {
  const { line, character } = d.range.start;
  console.error(
    `${file}:${line + 1}:${character + 1}: ${SEVERITY[d.severity] ?? 'error'}: ${d.message}`,
  );
}
process.exitCode = diagnostics.length === 0 ? 0 : 1;
