import { Connection } from '@temporalio/client';
import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { startDevTemporal } from '../../src/launcher/temporal';

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
