import type { ConnectionLike } from '@temporalio/client';
import { searchAttributes } from './contract';

/**
 * The search attributes delivery runs are started with that the namespace does not know.
 * Temporal refuses a start naming an unknown one, so a worker of a version that added one
 * (docs/operations.md, "register the search attributes") would turn every event into a
 * dispatch incident: the worker checks first. Undefined when the server does not say (a
 * key without the right to list them): the check is then left to the starts.
 */
export async function missingSearchAttributes(connection: Pick<ConnectionLike, 'operatorService'>, namespace: string): Promise<string[] | undefined> {
  let known: Set<string>;
  try {
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    known = new Set([...Object.keys(listed.customAttributes ?? {}), ...Object.keys(listed.systemAttributes ?? {})]);
  } catch {
    return undefined;
  }
  return searchAttributes.map((a) => a.name).filter((name) => !known.has(name));
}

/** What the worker says before it stops, naming what to run. */
export function missingSearchAttributesMessage(missing: string[], namespace: string): string {
  return `the Temporal namespace "${namespace}" does not know the search attribute${missing.length === 1 ? '' : 's'} ${missing.join(', ')}: register ${missing.length === 1 ? 'it' : 'them'} (docs/operations.md, "register the search attributes once") and start the worker again`;
}
