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
const RESOURCES = '(account|webhooks|events|end-shippers|shipments|portal-sessions|idempotency)';
const RESOURCE = `^src/${RESOURCES}/`;
const OPERATIONS = `^src/${RESOURCES}/operations[.]ts$`;
const TABLES = `^src/${RESOURCES}/tables[.]ts$`;
/** Modules every layer may use (the operation kit and the page query included): they import nothing of shiphook above them. */
const FOUNDATION = '^src/((db|errors|outbound|metrics)/|(config|log|ids|format|version|schema|health|net|operation|pagination)[.]ts$)';
const TOP = '^src/(cli/|cli[.]ts$|api/|portal/)';
const TEMPORAL_SANDBOX_PACKAGES = '^node_modules/@temporalio/(workflow|common)/';

/** An import that breaks the rule `name` (why: `comment`): from a module matching `from` to one matching `to`. */
const rule = (name, comment, from, to) => ({ name, comment, severity: 'error', from, to });

module.exports = {
  forbidden: [
    rule('no-cycles',
      'An import cycle (type-only imports included) makes two modules one: break it by moving the shared part down.',
      {},
      { circular: true }),
    rule('workflows-import-only-the-contract',
      'Workflow code runs in the sandbox: it imports @temporalio/workflow, the engine contract and other workflow files, and activities only as a type.',
      { path: '^workflows/' },
      { pathNot: ['^workflows/', '^src/engine/contract[.]ts$', TEMPORAL_SANDBOX_PACKAGES], dependencyTypesNot: ['type-only'] }),
    rule('workflows-type-imports',
      'The only types a workflow takes from outside the sandbox line are the contract and `type Activities`.',
      { path: '^workflows/' },
      { dependencyTypes: ['type-only'], pathNot: ['^workflows/', '^src/engine/contract[.]ts$', '^activities/index[.]ts$', '^node_modules/@temporalio/'] }),
    rule('contract-stands-alone',
      'The contract is imported by both sides of the sandbox line: values only from Temporal\'s sandbox-safe packages, types from the enumerations below.',
      { path: '^src/engine/contract[.]ts$' },
      { pathNot: [TEMPORAL_SANDBOX_PACKAGES, TABLES], dependencyTypesNot: ['type-only'] }),
    rule('activities-never-import-workflows',
      'What crosses the sandbox line lives in the contract.',
      { path: '^activities/' },
      { path: '^workflows/' }),
    rule('activities-below-the-engine',
      'The engine builds and runs the activities; they use only its contract and its request builder.',
      { path: '^activities/' },
      { path: '^src/engine/', pathNot: '^src/engine/(contract|signed-request)[.]ts$' }),
    rule('launcher-only-from-cli',
      'The dev launcher (embedded PostgreSQL, the Temporal dev server) is for `shiphook dev`, tests and the bench, never for production code.',
      { path: '^(src|workflows|activities)/', pathNot: '^src/(cli/|cli[.]ts$|launcher/)' },
      { path: '^src/launcher/' }),
    rule('nothing-imports-the-cli',
      'The CLI is the top: it wires the rest together.',
      { pathNot: '^src/(cli/|cli[.]ts$)' },
      { path: '^src/(cli/|cli[.]ts$)' }),
    rule('engine-below-the-api',
      'The engine (worker, outbox, replay) never reaches up into the HTTP layer.',
      { path: '^src/engine/' },
      { path: TOP }),
    rule('resources-below-the-engine',
      'A resource\'s rules are plain functions over the database; only its operations (the HTTP edge) may call the engine.',
      { path: RESOURCE, pathNot: OPERATIONS },
      { path: ['^src/engine/', '^workflows/', '^activities/', TOP] }),
    rule('operations-below-the-api',
      'Operations are declarations the api turns into routes and the OpenAPI document.',
      { path: OPERATIONS },
      { path: '^src/(cli/|cli[.]ts$|portal/|api/(app|router|openapi|auth|rate-limit)[.]ts$)' }),
    rule('tables-are-leaves',
      'Table types import only Kysely and other table types (src/db composes them into the Database interface).',
      { path: TABLES },
      { pathNot: [TABLES, '^node_modules/kysely/'] }),
    rule('foundation-imports-nothing-above',
      'The database, errors, outbound HTTP, metrics, config and log serve every layer and know none of them (src/db only composes the tables\' types).',
      { path: FOUNDATION },
      { path: [RESOURCE, '^src/engine/', '^workflows/', '^activities/', TOP], pathNot: TABLES }),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.mjs', '.js', '.cjs', '.json'] },
    exclude: { path: '^node_modules/' },
  },
};
