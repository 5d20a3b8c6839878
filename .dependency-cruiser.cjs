/**
 * The import rules of shiphook, checked by `npm run layers` and by test/architecture.test.ts,
 * which also proves each rule fires on a fixture of its own. Layers point one way, top to bottom:
 *
 *   cli ─▶ api, portal, engine ─▶ workflows, activities ─▶ resources ─▶ foundation (db, outbound, errors, …)
 *
 * with the sandbox line between workflows/ (deterministic code, bundled for Temporal's
 * sandbox) and everything that touches the world, and the dev launcher kept out of
 * production code. Type-only imports count: a cycle of types is still a cycle. Imports of
 * packages and Node built-ins count too (node_modules is not followed, but its edges are seen).
 *
 * Every module under src/ sits in one of LAYERS; a new folder or top-level file fails
 * `every-module-in-a-layer` until it is placed. Where what is coming goes:
 * - subscriptions: with webhooks and events, in those resource folders;
 * - rate limits and ordering of deliveries: the engine wing (src/engine/);
 * - operational webhooks: their own resource folder (src/operational-webhooks/, added to RESOURCES);
 * - the `listen` stream: an operation declared beside the API's others, served by src/api/;
 *   listeners (src/listeners/): a resource, whose deliveries leave through src/outbound/'s listener transport;
 * - the CLI: src/cli/.
 */
const RESOURCES = '(account|webhooks|events|end-shippers|shipments|portal-sessions|idempotency|operational-webhooks|listeners)';
const RESOURCE = `^src/${RESOURCES}/`;
const OPERATIONS = `^src/${RESOURCES}/operations[.]ts$`;
const TABLES = `^src/${RESOURCES}/tables[.]ts$`;
const CLI = '^src/(cli/|cli[.]ts$)';

/** The layers, top to bottom (the launcher serves the CLI alone); every module under src/ matches one. */
const LAYERS = {
  top: `${CLI}|^src/(api|portal)/`,
  launcher: '^src/launcher/',
  engine: '^src/engine/',
  workflows: '^workflows/',
  activities: '^activities/',
  resources: RESOURCE,
  /** Modules every layer may use (the operation kit, the page query and telemetry, whose spans every layer makes, included): they import nothing of shiphook above them. */
  foundation: '^src/((db|errors|outbound|metrics|telemetry)/|(config|log|ids|format|version|schema|health|net|operation|pagination)[.]ts$)',
};
const { top: TOP, foundation: FOUNDATION } = LAYERS;
/** The worker's own modules: the only ones that load the SDK's worker (native core, bundler). */
const WORKER = '^src/engine/(worker|bundle|runtime|activity-log-ids|worker-tracing)[.]ts$';

/** A package's modules, however it resolves (its own types or @types/…). */
const pkg = (name) => `^node_modules/(@types/)?${name}/`;
const TEMPORAL_SANDBOX_PACKAGES = pkg('@temporalio/(workflow|common)');
/** The most dependents a rule may count (dependency-cruiser's limit): "fewer than this" is, in practice, any module. */
const ANY_NUMBER = 100;

/** An import that breaks the rule `name` (why: `comment`): from a module matching `from` to one matching `to`. */
const rule = (name, comment, from, to) => ({ name, comment, severity: 'error', from, to });

module.exports = {
  forbidden: [
    {
      name: 'every-module-in-a-layer',
      comment: 'A module outside every layer is guarded by no rule: place its folder in LAYERS (.dependency-cruiser.cjs) first.',
      severity: 'error',
      from: {},
      module: { path: '^src/', pathNot: Object.values(LAYERS), numberOfDependentsLessThan: ANY_NUMBER },
    },
    rule('no-cycles',
      'An import cycle (type-only imports included) makes two modules one: break it by moving the shared part down.',
      {},
      { circular: true }),
    rule('workflows-import-only-the-contract',
      'Workflow code runs in the sandbox: it imports @temporalio/workflow or /common, the engine contract and other workflow files, and activities only as a type.',
      { path: '^workflows/' },
      { pathNot: ['^workflows/', '^src/engine/contract[.]ts$', TEMPORAL_SANDBOX_PACKAGES], dependencyTypesNot: ['type-only'] }),
    rule('workflows-type-imports',
      'The only types a workflow takes from outside the sandbox line are the contract, `type Activities` and Temporal\'s sandbox-safe packages.',
      { path: '^workflows/' },
      { dependencyTypes: ['type-only'], pathNot: ['^workflows/', '^src/engine/contract[.]ts$', '^activities/index[.]ts$', TEMPORAL_SANDBOX_PACKAGES] }),
    rule('contract-stands-alone',
      'The contract is imported by both sides of the sandbox line: it imports only Temporal\'s sandbox-safe packages and the tables\' enumerations.',
      { path: '^src/engine/contract[.]ts$' },
      { pathNot: [TEMPORAL_SANDBOX_PACKAGES, TABLES] }),
    rule('activities-never-import-workflows',
      'What crosses the sandbox line lives in the contract.',
      { path: '^activities/' },
      { path: '^workflows/' }),
    rule('activities-below-the-engine',
      'The engine builds and runs the activities; they use only its contract and its request builder.',
      { path: '^activities/' },
      { path: '^src/engine/', pathNot: '^src/engine/(contract|signed-request)[.]ts$' }),
    rule('activities-below-the-api',
      'Activities run in the worker, which serves no HTTP: the api, portal and CLI are callers of the engine, never its helpers.',
      { path: '^activities/' },
      { path: TOP }),
    rule('launcher-only-from-cli',
      'The dev launcher (embedded PostgreSQL, the Temporal dev server) is for `shiphook dev`, tests and the bench, never for production code.',
      { path: '^(src|workflows|activities)/', pathNot: [CLI, LAYERS.launcher] },
      { path: LAYERS.launcher }),
    rule('nothing-imports-the-cli',
      'The CLI is the top: it wires the rest together.',
      { pathNot: CLI },
      { path: CLI }),
    rule('engine-below-the-api',
      'The engine (worker, outbox, replay) never reaches up into the HTTP layer.',
      { path: LAYERS.engine },
      { path: TOP }),
    rule('resources-below-the-engine',
      'A resource\'s rules are plain functions over the database; only its operations (the HTTP edge) may call the engine.',
      { path: RESOURCE, pathNot: OPERATIONS },
      { path: [LAYERS.engine, '^workflows/', '^activities/', TOP] }),
    rule('operations-below-the-api',
      'Operations are declarations the api turns into routes and the OpenAPI document.',
      { path: OPERATIONS },
      { path: [CLI, '^src/(portal/|api/(app|router|openapi|auth|rate-limit)[.]ts$)'] }),
    rule('operations-start-work-through-the-engine',
      'An operation reaches Temporal through the engine\'s starters; workflow and activity code is the worker\'s alone.',
      { path: OPERATIONS },
      { path: ['^workflows/', '^activities/'] }),
    rule('tables-are-leaves',
      'Table types import only Kysely and other table types (src/db composes them into the Database interface).',
      { path: TABLES },
      { pathNot: [TABLES, pkg('kysely')] }),
    rule('foundation-imports-nothing-above',
      'The database, errors, outbound HTTP, metrics, config and log serve every layer and know none of them (src/db only composes the tables\' types).',
      { path: FOUNDATION },
      { path: [RESOURCE, LAYERS.engine, '^workflows/', '^activities/', TOP], pathNot: TABLES }),
    rule('customer-requests-through-outbound',
      'Whatever sends a request to a customer goes through src/outbound, which owns the address guard; only the CLI also talks HTTP (to shiphook or localhost).',
      { pathNot: ['^src/outbound/', CLI] },
      { path: pkg('undici') }),
    rule('temporal-worker-only-in-the-worker',
      'The SDK\'s worker package loads its native core and bundler: only the worker\'s own modules and the dev launcher import it, so the api process never loads it.',
      { pathNot: [WORKER, LAYERS.launcher] },
      { path: pkg('@temporalio/worker') }),
    rule('express-only-at-the-top',
      'Express is the api\'s and portal\'s framework: below them, code knows nothing of HTTP routing, so the worker and the CLI can use it.',
      { pathNot: TOP },
      { path: pkg('express') }),
  ],
  options: {
    // Packages are leaves: their own imports are not cruised, but every import of one is checked.
    doNotFollow: { path: '^node_modules/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.mjs', '.js', '.cjs', '.json'] },
  },
};
