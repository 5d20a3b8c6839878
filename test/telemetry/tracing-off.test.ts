import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { eventStatus, publish, webhook } from '../support/events';
import { createAccount } from '../support/http';
import { isolatedSystem } from '../support/isolated';
import { startReceiver } from '../support/receiver';

describe('tracing off (no OTEL_* exporter named)', () => {
  it('is on only when an exporter is named, and OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none turn it off', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(loadConfig({}).tracing).toBe(false);
    expect(loadConfig({ OTEL_SERVICE_NAME: 'shiphook', OTEL_TRACES_SAMPLER: 'always_on' }).tracing).toBe(false);
    expect(loadConfig(endpoint).tracing).toBe(true);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).tracing).toBe(true);
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'console' }).tracing).toBe(true);
    expect(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).tracing).toBe(false);
    expect(loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).tracing).toBe(false);
  });

  it('an api and a worker without it store no trace, carry none into Temporal, and start no SDK', async () => {
    const iso = await isolatedSystem(); // its api is served by this process, which never starts tracing
    const receiver = await startReceiver();
    try {
      const acct = await createAccount(iso.api);
      await webhook(iso.api, acct.testKey, receiver.url);
      const worker = await iso.workerProcess();
      const event = await publish(iso.api, acct.user.id, 'test');
      await eventStatus(iso.api, acct.testKey, event.id, 'completed');
      const row = await iso.api.db.selectFrom('events').select('traceparent').where('id', '=', event.id).executeTakeFirstOrThrow();
      expect(row.traceparent).toBeNull();
      // The dispatcher's start carries no trace header (the client has no interceptor).
      const history = await (await iso.api.temporal()).workflow.getHandle(event.id).fetchHistory();
      const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
      expect(started).toBeTruthy();
      expect(Object.keys(started!.header?.fields ?? {})).toEqual([]);
      expect(worker.logs.filter((l) => l.includes('exporting traces') || l.includes('"source":"opentelemetry"'))).toEqual([]);
    } finally {
      await receiver.close();
      await iso.close();
    }
  });
});
