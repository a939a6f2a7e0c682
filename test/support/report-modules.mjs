// Loaded with `--import` into a daemon under test: when the process exits, prints the Node.js
// modules its main thread loaded, as one stderr line `MODULES [...]`.
process.on('exit', () => {
  process._rawDebug(`MODULES ${JSON.stringify(process.moduleLoadList)}`);
});
