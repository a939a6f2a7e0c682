// Types of build-plugins.mjs, for the test that bundles with them (test/build/plugins.test.ts).
import type { Plugin } from 'esbuild';

export declare const zodEnglishOnly: Plugin;
export declare const iconvUnicodeOnly: Plugin;
export declare const mimeDbSubset: Plugin;
export declare const MEDIA_TYPES_KEPT: string[];
export declare const REQUIRE_SHIM: string;
export declare const undiciHttp2Lazy: Plugin;
