/**
 * The direction of dependencies in src/, enforced by `npm run lint` (docs/architecture.md,
 * "Layers"). Top to bottom: the entry points (the CLI, the measurement worker's entry) → the
 * registry (checks/index.ts, the composition root) → the checks (one folder each) and the daemon
 * → the generic layers → the kernel, which imports nothing else of ours. A rule names what may not
 * be imported from where; a cycle between folders is always an error.
 */
const GENERIC =
  '^src/(config|metrics|report|server|scheduler|sessions|limits|api|control|maintenance|measurement/(?!worker\\.ts)|runner\\.ts|environment\\.ts|daemon\\.ts|logging\\.ts|healthcheck\\.ts|version\\.ts|v8-tiering\\.ts)';

module.exports = {
  forbidden: [
    {
      name: 'no-folder-cycle',
      comment: 'Folders depend one way: a cycle that leaves its folder ties two folders together.',
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { circular: true, viaSomeNot: ['^src/$1/'] },
    },
    {
      name: 'kernel-imports-nothing-of-ours',
      comment: 'The kernel is the contract every layer shares: it depends on no layer.',
      severity: 'error',
      from: { path: '^src/kernel/' },
      to: { path: '^src/', pathNot: '^src/kernel/' },
    },
    {
      name: 'generic-layers-are-handed-the-checks',
      comment:
        'Generic layers receive the list of checks from the composition root; they import no check and not the registry.',
      severity: 'error',
      from: { path: GENERIC },
      to: { path: '^src/checks/' },
    },
    {
      name: 'registry-only-in-entry-points',
      comment: 'Only the entry points import the registry (checks/index.ts) and hand its list on.',
      severity: 'error',
      from: { pathNot: '^src/(cli\\.ts|cli/|measurement/worker\\.ts|checks/index\\.ts)' },
      to: { path: '^src/checks/index\\.ts$' },
    },
    {
      name: 'checks-do-not-import-each-other',
      comment: 'A check follows another only through the session journal (docs/architecture.md).',
      severity: 'error',
      from: { path: '^src/checks/([^/]+)/' },
      to: { path: '^src/checks/', pathNot: ['^src/checks/$1/', '^src/checks/shared/'] },
    },
    {
      name: 'checks-stay-below-the-runtime',
      comment:
        'A check sees its context and sink; it imports no scheduler, runner, metrics registry, server, daemon or entry point.',
      severity: 'error',
      from: { path: '^src/checks/(?!index\\.ts)' },
      to: {
        path: '^src/(cli|cli\\.ts|daemon\\.ts|server|metrics|scheduler|measurement|runner\\.ts|environment\\.ts|control|maintenance|simulator)',
      },
    },
    {
      name: 'checks-build-rows-with-the-dashboard-kit',
      comment:
        "A check's rows (dashboard.ts) build panels with src/dashboard-kit/, which imports only the kernel; dashboards/src assembles every check's rows from the registry (docs/dashboards.md).",
      severity: 'error',
      from: { path: '^src/checks/' },
      to: { path: '^dashboards/' },
    },
    {
      name: 'dashboards-stay-out-of-the-daemon',
      comment:
        "Only a check's dashboard.ts (and their contract, checks/shared/dashboard.ts) and the dashboard kit import dashboard code or the Grafana SDK: the generator finds a check's rows by name, so the daemon's bundle has none of it.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(checks/[^/]+/dashboard\\.ts$|dashboard-kit/)' },
      to: {
        path: '^(dashboards/|src/dashboard-kit/|src/checks/[^/]+/dashboard\\.ts$|node_modules/@grafana/)',
      },
    },
    {
      name: 'entry-points-are-the-top',
      comment: 'Nothing imports the CLI: it is where the program starts.',
      severity: 'error',
      from: { pathNot: '^src/(cli\\.ts|cli/)' },
      to: { path: '^src/(cli/|cli\\.ts$)' },
    },
    {
      name: 'only-the-cli-starts-the-daemon-and-the-simulator',
      comment: 'The daemon imports nothing from the simulator; demo mode (cli/demo.ts) starts it.',
      severity: 'error',
      from: { pathNot: '^src/(cli\\.ts|cli/|simulator/)' },
      to: { path: '^src/(daemon\\.ts$|simulator/)' },
    },
    {
      name: 'simulator-is-apart',
      comment:
        'The simulator shares only the API schemas, the vocabulary and the duration syntax with the monitor.',
      severity: 'error',
      from: { path: '^src/simulator/' },
      to: {
        path: '^src/',
        pathNot: [
          '^src/simulator/',
          '^src/api/schemas\\.ts$',
          '^src/kernel/',
          '^src/config/duration\\.ts$',
        ],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
