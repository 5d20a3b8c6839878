/**
 * The import rules of shiphook, checked by `npm test` (test/architecture.test.ts) with
 * dependency-cruiser. Layers point one way, top to bottom:
 *
 *   cli ─▶ api, portal, engine ─▶ workflows, activities ─▶ resources ─▶ db, outbound, errors, …
 *
 * with the sandbox line between workflows/ (deterministic code, bundled for Temporal's
 * sandbox) and everything that touches the world, and the dev launcher kept out of
 * production code. Type-only imports count: a cycle of types is still a cycle.
 */
const RESOURCES = '(account|webhooks|events|end-shippers|shipments|portal-sessions)';
const RESOURCE = `^src/${RESOURCES}/`;
const OPERATIONS = `^src/${RESOURCES}/operations[.]ts$`;
const TABLES = `^src/${RESOURCES}/tables[.]ts$`;
/** Modules every layer may use (the operation kit and the page query included): they import nothing of shiphook above them. */
const FOUNDATION = '^src/((db|errors|outbound|metrics)/|(config|log|ids|format|version|schema|health|net|operation|pagination)[.]ts$)';
const TOP = '^src/(cli/|cli[.]ts$|api/|portal/)';
const TEMPORAL_SANDBOX_PACKAGES = '^node_modules/@temporalio/(workflow|common)/';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'An import cycle (type-only imports included) makes two modules one: break it by moving the shared part down.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'workflows-import-only-the-contract',
      comment: 'Workflow code runs in the sandbox: it imports @temporalio/workflow, the engine contract and other workflow files, and activities only as a type.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: { pathNot: ['^workflows/', '^src/engine/contract[.]ts$', TEMPORAL_SANDBOX_PACKAGES], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'workflows-type-imports',
      comment: 'The only types a workflow takes from outside the sandbox line are the contract and `type Activities`.',
      severity: 'error',
      from: { path: '^workflows/' },
      to: { dependencyTypes: ['type-only'], pathNot: ['^workflows/', '^src/engine/contract[.]ts$', '^activities/index[.]ts$', '^node_modules/@temporalio/'] },
    },
    {
      name: 'contract-stands-alone',
      comment: 'The contract is imported by both sides of the sandbox line: values only from Temporal\'s sandbox-safe packages, types from the enumerations below.',
      severity: 'error',
      from: { path: '^src/engine/contract[.]ts$' },
      to: { pathNot: [TEMPORAL_SANDBOX_PACKAGES, TABLES], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'activities-never-import-workflows',
      comment: 'What crosses the sandbox line lives in the contract.',
      severity: 'error',
      from: { path: '^activities/' },
      to: { path: '^workflows/' },
    },
    {
      name: 'activities-below-the-engine',
      comment: 'The engine builds and runs the activities; they use only its contract and its request builder.',
      severity: 'error',
      from: { path: '^activities/' },
      to: { path: '^src/engine/', pathNot: '^src/engine/(contract|signed-request)[.]ts$' },
    },
    {
      name: 'launcher-only-from-cli',
      comment: 'The dev launcher (embedded PostgreSQL, the Temporal dev server) is for `shiphook dev`, tests and the bench, never for production code.',
      severity: 'error',
      from: { path: '^(src|workflows|activities)/', pathNot: '^src/(cli/|cli[.]ts$|launcher/)' },
      to: { path: '^src/launcher/' },
    },
    {
      name: 'nothing-imports-the-cli',
      severity: 'error',
      from: { pathNot: '^src/(cli/|cli[.]ts$)' },
      to: { path: '^src/(cli/|cli[.]ts$)' },
    },
    {
      name: 'engine-below-the-api',
      comment: 'The engine (worker, outbox, replay) never reaches up into the HTTP layer.',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: TOP },
    },
    {
      name: 'resources-below-the-engine',
      comment: 'A resource\'s rules are plain functions over the database; only its operations (the HTTP edge) may call the engine.',
      severity: 'error',
      from: { path: RESOURCE, pathNot: OPERATIONS },
      to: { path: ['^src/engine/', '^workflows/', '^activities/', TOP] },
    },
    {
      name: 'operations-below-the-api',
      comment: 'Operations are declarations the api turns into routes and the OpenAPI document.',
      severity: 'error',
      from: { path: OPERATIONS },
      to: { path: '^src/(cli/|cli[.]ts$|portal/|api/(app|router|openapi|auth|rate-limit)[.]ts$)' },
    },
    {
      name: 'tables-are-leaves',
      comment: 'Table types import only Kysely and other table types (src/db composes them into the Database interface).',
      severity: 'error',
      from: { path: TABLES },
      to: { pathNot: [TABLES, '^node_modules/kysely/'] },
    },
    {
      name: 'foundation-imports-nothing-above',
      comment: 'The database, errors, outbound HTTP, metrics, config and log serve every layer and know none of them (src/db only composes the tables\' types).',
      severity: 'error',
      from: { path: FOUNDATION },
      to: { path: [RESOURCE, '^src/engine/', '^workflows/', '^activities/', TOP], pathNot: TABLES },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.mjs', '.js', '.cjs', '.json'] },
    exclude: { path: '^node_modules/' },
  },
};
