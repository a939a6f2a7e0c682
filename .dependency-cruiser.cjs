/**
 * The direction of dependencies in the repository, enforced by `npm run lint` (docs/architecture.md,
 * "Layers"), which cruises src/, dashboards/src/, scripts/, bench/ and web/. In src/, top to
 * bottom: the entry points (the CLI, the measurement worker's entry, the health check) → the
 * registry (checks/index.ts, the composition root) → the checks (one folder each) and the daemon →
 * the generic layers, in the order of LAYERS → the kernel, which imports nothing else of ours. The
 * tools (dashboards/src, scripts/, bench/) and the status page (web/) build on src/, never the
 * reverse. A rule names what may not be imported from where; a cycle between folders is always an
 * error.
 */

/**
 * The generic layers of src/, bottom first: a layer imports the layers before it and never one
 * after it (docs/architecture.md, "Layers", says why each stands where it does). Paths are regular
 * expressions below `src/`.
 */
const LAYERS = [
  { name: 'kernel', paths: ['kernel/'] },
  {
    name: 'foundations',
    paths: [
      'api/',
      'drift/',
      'maintenance/',
      'dashboard-kit/',
      'version\\.ts$',
      'v8-tiering\\.ts$',
      'v8-memory\\.ts$',
    ],
  },
  { name: 'limits', paths: ['limits/'] },
  { name: 'config', paths: ['config/'] },
  { name: 'stores', paths: ['sessions/', 'metrics/', 'report/', 'logging\\.ts$'] },
  { name: 'run', paths: ['runner\\.ts$', 'server/', 'control/'] },
  { name: 'environment', paths: ['environment\\.ts$'] },
  { name: 'scheduler', paths: ['scheduler/'] },
  { name: 'measurement', paths: ['measurement/(?!worker\\.ts$)'] },
  { name: 'daemon', paths: ['daemon\\.ts$', 'daemon/'] },
];

/** A regular expression matching the files of the given layers. */
function layerPattern(layers) {
  return `^src/(${layers.flatMap((layer) => layer.paths).join('|')})`;
}

/** One rule per layer: it imports no layer above it. */
const layerOrderRules = LAYERS.slice(0, -1).map((layer, index) => {
  const above = LAYERS.slice(index + 1);
  return {
    name: `layer-order-${layer.name}`,
    comment: `The ${layer.name} layer imports only layers below it, never ${above.map((l) => l.name).join(', ')}.`,
    severity: 'error',
    from: { path: layerPattern([layer]) },
    to: { path: layerPattern(above) },
  };
});

/** The generic layers (all but the kernel) and the health check's entry: they name no check. */
const GENERIC = `${layerPattern(LAYERS.slice(1))}|^src/healthcheck\\.ts$`;

module.exports = {
  forbidden: [
    {
      name: 'no-folder-cycle',
      comment:
        'Folders depend one way. A folder counts with its subfolders: its imports are those of every file beneath it to a file outside it, and no chain of them may come back to it.',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-file-cycle-across-folders',
      comment:
        "A cycle of files that leaves its folder ties that folder to another; the folder rule cannot see one through a subfolder's parent or through src/'s own files.",
      severity: 'error',
      from: { path: '^(.+)/[^/]+$' },
      to: { circular: true, viaSomeNot: ['^$1/[^/]+$'] },
    },
    ...layerOrderRules,
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
      comment:
        'Only the entry points import the registry (checks/index.ts) and hand its list on; the tools that generate from the checks read it too.',
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: '^src/(cli\\.ts|cli/|measurement/worker\\.ts|checks/index\\.ts)',
      },
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
        path: '^src/(cli|cli\\.ts|daemon\\.ts|daemon/|server|metrics|scheduler|measurement|runner\\.ts|environment\\.ts|control|maintenance|simulator)',
      },
    },
    {
      name: 'dashboards-stay-out-of-the-daemon',
      comment:
        "Only a check's dashboard.ts (and their contract, checks/shared/dashboard.ts) and the dashboard kit import dashboard code or the Grafana SDK: the generator finds a check's rows by name, so the daemon's bundle has none of it.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(checks/[^/]+/dashboard\\.ts$|dashboard-kit/)' },
      to: {
        path: '^(src/dashboard-kit/|src/checks/[^/]+/dashboard\\.ts$|node_modules/@grafana/)',
      },
    },
    {
      name: 'src-is-the-product',
      comment:
        'The daemon is built from src/ alone: it imports nothing from the tools, the tests or the status page, which build on it.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(dashboards|scripts|bench|test|web)/' },
    },
    {
      name: 'tools-are-not-imported',
      comment:
        'scripts/ and bench/ are programs, not libraries: nothing outside each imports it (the tests may).',
      severity: 'error',
      from: { path: '^(src|dashboards|scripts|bench|web)/' },
      to: { path: '^(scripts|bench)/', pathNot: '^$1/' },
    },
    {
      name: 'dashboards-read-definitions',
      comment:
        'The dashboards are made from definitions: the registry and the checks, the kernel, the metric catalog and the dashboard kit; never from the runtime or the tests.',
      severity: 'error',
      from: { path: '^dashboards/' },
      to: {
        path: '^(src|test)/',
        pathNot: '^src/(checks/|kernel/|metrics/definitions\\.ts$|dashboard-kit/)',
      },
    },
    {
      name: 'generators-start-nothing',
      comment:
        'The generators (scripts/) read definitions and pure functions; they never import the entry points, the daemon, the engine, the server or the tests.',
      severity: 'error',
      from: { path: '^scripts/' },
      to: {
        path: '^(src/(cli\\.ts|cli/|healthcheck\\.ts|daemon\\.ts|daemon/|measurement/|server/|environment\\.ts|runner\\.ts)|test/)',
      },
    },
    {
      name: 'the-page-imports-only-types-from-src',
      comment:
        'The status page (web/) is a bundle of its own served to browsers: from src/ it takes the shapes of the documents it reads, no code.',
      severity: 'error',
      from: { path: '^web/' },
      to: { path: '^src/', dependencyTypesNot: ['type-only'] },
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
      from: { path: '^src/', pathNot: '^src/(cli\\.ts|cli/|simulator/)' },
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
