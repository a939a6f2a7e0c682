// Preloaded with `--import` into a CLI process: records every V8 flag the process sets through
// `v8.setFlagsFromString` and writes them, as a JSON list, to the file named by V8_FLAGS_LOG when
// the process exits. It wraps the built-in module's function, and syncs the ESM bindings so that
// `import { setFlagsFromString } from 'node:v8'` sees the wrapper too.
import { writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';

const v8 = createRequire(import.meta.url)('node:v8');
const original = v8.setFlagsFromString;
const flags = [];
v8.setFlagsFromString = (flag) => {
  flags.push(flag);
  original.call(v8, flag);
};
syncBuiltinESMExports();
process.on('exit', () => writeFileSync(process.env.V8_FLAGS_LOG, JSON.stringify(flags)));
