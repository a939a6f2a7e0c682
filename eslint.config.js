// Lint rules that matter most in a daemon: no floating or misused promises, no console in src/.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'dist-check/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-console': 'error',
    },
  },
  {
    // A function is a screen: one over 80 lines does several jobs and is split by job
    // (docs/architecture.md, "Short functions"). Tests' describe blocks are lists, not functions.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80 }] },
  },
  {
    // On Node 24 an ES import of node:http loads Node's own undici, 13 MiB of RSS
    // (src/server/node-http.ts); the daemon loads it with require, there. The simulator runs in
    // demo mode and `simulate` alone.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts', 'src/simulator/**', 'src/server/node-http.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        ...['node:http', 'http'].map((name) => ({
          name,
          message: 'import { http } from server/node-http.ts (docs/architecture.md, "The build")',
          allowTypeImports: true,
        })),
      ],
    },
  },
  {
    // The CLI entry, scripts, benchmarks and tests talk to a terminal on purpose.
    files: ['src/cli.ts', 'src/cli/**', 'scripts/**', 'bench/**', 'test/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // The dependency-cruiser configuration is CommonJS, as dependency-cruiser reads it.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable' } },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly' },
    },
  },
);
