import { Connection } from '@temporalio/client';
import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { MIN_NAMESPACE_RETENTION_MS, startDevTemporal } from '../../src/launcher/temporal';

/** The retention a dev server started for SHIPHOOK_EVENT_RETENTION=`setting` gives its namespace, and the event retention itself. */
async function namespaceRetention(setting: string): Promise<{ eventRetentionMs: number; namespaceMs: number }> {
  const { eventRetentionMs } = loadConfig({ SHIPHOOK_EVENT_RETENTION: setting });
  const temporal = await startDevTemporal({ cliPath: process.env.TEMPORAL_CLI_PATH, ui: false, namespaceRetentionMs: eventRetentionMs });
  try {
    const connection = await Connection.connect({ address: temporal.address });
    try {
      const described = await connection.workflowService.describeNamespace({ namespace: 'default' });
      return { eventRetentionMs, namespaceMs: Number(described.config?.workflowExecutionRetentionTtl?.seconds) * 1000 };
    } finally {
      await connection.close();
    }
  } finally {
    await temporal.stop();
  }
}

it("the dev server's namespace keeps closed histories as long as events are kept (SHIPHOOK_EVENT_RETENTION)", async () => {
  const { eventRetentionMs, namespaceMs } = await namespaceRetention('9d');
  expect(namespaceMs).toBe(eventRetentionMs);
}, 60_000);

it("an event retention under the server's minimum keeps histories for that minimum instead of failing the start", async () => {
  expect((await namespaceRetention('5m')).namespaceMs).toBe(MIN_NAMESPACE_RETENTION_MS);
}, 60_000);
