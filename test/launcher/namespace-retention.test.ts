import { Connection } from '@temporalio/client';
import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { MIN_NAMESPACE_RETENTION_MS, startDevTemporal } from '../../src/launcher/temporal';

it("the dev server's namespace keeps closed histories as long as events are kept (SHIPHOOK_EVENT_RETENTION)", async () => {
  const { eventRetentionMs } = loadConfig({ SHIPHOOK_EVENT_RETENTION: '9d' });
  const temporal = await startDevTemporal({ cliPath: process.env.TEMPORAL_CLI_PATH, ui: false, namespaceRetentionMs: eventRetentionMs });
  try {
    const connection = await Connection.connect({ address: temporal.address });
    try {
      const described = await connection.workflowService.describeNamespace({ namespace: 'default' });
      expect(Number(described.config?.workflowExecutionRetentionTtl?.seconds) * 1000).toBe(eventRetentionMs);
    } finally {
      await connection.close();
    }
  } finally {
    await temporal.stop();
  }
}, 60_000);

it('an event retention under the server\'s minimum keeps histories for that minimum instead of failing the start', async () => {
  const { eventRetentionMs } = loadConfig({ SHIPHOOK_EVENT_RETENTION: '5m' });
  const temporal = await startDevTemporal({ cliPath: process.env.TEMPORAL_CLI_PATH, ui: false, namespaceRetentionMs: eventRetentionMs });
  try {
    const connection = await Connection.connect({ address: temporal.address });
    try {
      const described = await connection.workflowService.describeNamespace({ namespace: 'default' });
      expect(Number(described.config?.workflowExecutionRetentionTtl?.seconds) * 1000).toBe(MIN_NAMESPACE_RETENTION_MS);
    } finally {
      await connection.close();
    }
  } finally {
    await temporal.stop();
  }
}, 60_000);
