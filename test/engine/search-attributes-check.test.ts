import { NativeConnection } from '@temporalio/worker';
import { msToTs } from '@temporalio/common/lib/time';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchAttributes } from '../../src/engine/contract';
import { missingSearchAttributes } from '../../src/engine/search-attributes-check';
import { createWorker } from '../../src/engine/worker';
import { startSystem, type TestSystem } from '../support/system';

/**
 * A worker of a version that sets a search attribute the namespace does not know (an upgrade
 * whose registration step was skipped) refuses to start, naming what to register, instead
 * of turning every event into a dispatch incident.
 */
let sys: TestSystem;
let connection: NativeConnection;
const bare = `shiphook-no-attributes-${process.pid}`;

beforeAll(async () => {
  sys = await startSystem();
  connection = await NativeConnection.connect({ address: sys.config.temporalAddress! });
  // A namespace of its own, with none of shiphook's attributes registered.
  await connection.workflowService.registerNamespace({ namespace: bare, workflowExecutionRetentionPeriod: msToTs('1 day') });
});
afterAll(async () => {
  await connection?.close();
  await sys?.close();
});

describe('the worker\'s start', () => {
  it('finds every attribute on a namespace that has them, and names the ones another lacks', async () => {
    expect(await missingSearchAttributes(connection, sys.config.temporalNamespace)).toEqual([]);
    expect(await missingSearchAttributes(connection, bare)).toEqual(searchAttributes.map((a) => a.name));
  });

  it('refuses to start on a namespace without them, saying what to register', async () => {
    const started = createWorker({ ...sys.config, temporalNamespace: bare }, sys.db);
    await expect(started).rejects.toThrow(`the Temporal namespace "${bare}" does not know the search attributes ShiphookEventId, `);
    await expect(started).rejects.toThrow(/register them \(docs\/operations\.md/);
  });
});
