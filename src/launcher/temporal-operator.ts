import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { searchAttributes } from '../engine/contract';
import { LaunchError } from './launch-error';

/**
 * What the launchers ask of a running Temporal server through the `temporal` CLI's
 * `operator` commands: the same commands docker-compose.yml's `temporal-search-attributes`
 * runs, so the dev server, the cluster test's server and compose's are set up alike.
 */

/** The CLI's names for the contract's search attribute types. */
export const CLI_TYPE: Record<string, string> = {
  TEXT: 'Text', KEYWORD: 'Keyword', INT: 'Int', DOUBLE: 'Double', BOOL: 'Bool', DATETIME: 'Datetime', KEYWORD_LIST: 'KeywordList',
};

/** The shortest namespace retention the server takes ("A valid retention period is not set" below it). */
export const MIN_NAMESPACE_RETENTION_MS = 60 * 60 * 1000;

const NAMESPACE = 'default';

/** Runs `temporal <args>`; its stdout, or a LaunchError saying `what` failed with the CLI's last line. */
async function temporalCli(cli: string, args: string[], what: string): Promise<string> {
  try {
    return (await promisify(execFile)(cli, args, { encoding: 'utf8' })).stdout;
  } catch (err) {
    const { stderr, message } = err as { stderr?: string; message: string };
    throw new LaunchError(`could not ${what}: ${(stderr || message).trim().split('\n').slice(-1)[0]}`);
  }
}

/** The retention the CLI is given: a retention below the server's minimum (a soak's minutes) keeps histories for that minimum. */
function retentionArg(retentionMs: number): string {
  return `${Math.ceil(Math.max(retentionMs, MIN_NAMESPACE_RETENTION_MS) / 1000)}s`;
}

/**
 * `temporal operator namespace update --retention`: the server keeps its namespaces across
 * restarts (with a db file or a database), so every start sets it.
 */
export async function setNamespaceRetention(cli: string, address: string, retentionMs: number): Promise<void> {
  const args = ['operator', 'namespace', 'update', '--address', address, '--namespace', NAMESPACE, '--retention', retentionArg(retentionMs)];
  await temporalCli(cli, args, "set the Temporal namespace's retention");
}

/** Whether the server's frontend answers `operator cluster health` with SERVING now. */
export async function clusterServing(cli: string, address: string): Promise<boolean> {
  return temporalCli(cli, ['operator', 'cluster', 'health', '--address', address], 'ask the Temporal cluster for its health').then(
    (out) => /SERVING/.test(out),
    () => false,
  );
}

/**
 * A server of our own (not the dev server, which makes it) has no `default` namespace until
 * it is created: created with the retention when missing, its retention set when present.
 */
export async function ensureNamespace(cli: string, address: string, retentionMs: number | undefined): Promise<void> {
  const exists = await temporalCli(cli, ['operator', 'namespace', 'describe', '--address', address, '--namespace', NAMESPACE], 'describe').then(() => true, () => false);
  if (exists) {
    if (retentionMs !== undefined) await setNamespaceRetention(cli, address, retentionMs);
    return;
  }
  const args = ['operator', 'namespace', 'create', '--address', address, '--namespace', NAMESPACE];
  if (retentionMs !== undefined) args.push('--retention', retentionArg(retentionMs));
  await temporalCli(cli, args, 'create the Temporal namespace default');
}

/** How long a namespace just created may take to reach the frontend's namespace cache (refreshed every few seconds). */
const NAMESPACE_KNOWN_TIMEOUT_MS = 60_000;

/**
 * `temporal operator search-attribute create` for each of the contract's attributes (one
 * call each: given several names, the CLI registers only the first). Registering an
 * attribute that exists changes nothing, so every start registers them all. A namespace
 * just created is "not found" by the frontend until its namespace cache refreshes: tried
 * again until it is known, so that clients started after this find it too.
 */
export async function registerSearchAttributes(cli: string, address: string): Promise<void> {
  const deadline = Date.now() + NAMESPACE_KNOWN_TIMEOUT_MS;
  for (const attr of searchAttributes) {
    const args = ['operator', 'search-attribute', 'create', '--address', address, '--namespace', NAMESPACE, '--name', attr.name, '--type', CLI_TYPE[attr.type]!];
    for (;;) {
      try {
        await temporalCli(cli, args, `register the search attribute ${attr.name}`);
        break;
      } catch (err) {
        if (!/not found/i.test((err as Error).message) || Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }
}

/**
 * The namespace's custom search attributes as `name → type` in the contract's words
 * (`KEYWORD`, `KEYWORD_LIST`), from `temporal operator search-attribute list`.
 */
export async function listSearchAttributes(cli: string, address: string): Promise<Record<string, string>> {
  const out = await temporalCli(cli, ['operator', 'search-attribute', 'list', '--address', address, '--namespace', NAMESPACE, '--output', 'json'], 'list the search attributes');
  const { customAttributes = {} } = JSON.parse(out) as { customAttributes?: Record<string, string> };
  return Object.fromEntries(Object.entries(customAttributes).map(([name, type]) => [name, type.replace(/^INDEXED_VALUE_TYPE_/, '')]));
}
