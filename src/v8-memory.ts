/**
 * V8's memory mode, set for the whole process (both threads) before any command runs, so it holds
 * however the CLI is started (`isa-monitor`, `node dist/cli.js`, the image).
 *
 * `--optimize-for-size` has V8 favour a small heap over speed: smaller young generations, a heap
 * that grows later, code and feedback kept leaner. A monitor does little work per second, so the
 * trade suits it: on Node 24 it took 3 MiB off the daemon at rest and 57 MiB off it at 1000
 * environments, for no CPU per run this machine could tell apart (bench/README.md, "Node 24: where
 * the memory goes"). It is read while the process runs, and the measurement worker, made after
 * it, starts with it.
 */
import { setFlagsFromString } from 'node:v8';

export const MEMORY_FLAGS = ['--optimize-for-size'] as const;

for (const flag of MEMORY_FLAGS) setFlagsFromString(flag);
