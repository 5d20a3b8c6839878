import { sql } from 'kysely';
import { Gauge } from 'prom-client';
import type { Db } from '../db/database';
import { log } from '../log';
import { notDeleted } from '../db/soft-delete';
import { errorText } from '../errors/error-text';

/**
 * The delivery engine's state, read from PostgreSQL when Prometheus scrapes (never
 * on the delivery path): one statement per scrape, on partial and status indexes
 * (`events_undispatched_idx`, `events_status_idx`). Every worker reports the same
 * figures (they describe the shared database): aggregate them with `max`.
 * If the read fails the gauges are left empty rather than stale.
 */
export function registerEngineMetrics(db: Db): void {
  // prom-client collects each gauge separately: they share one read per scrape.
  let reading: Promise<void> | undefined;
  const collect = () =>
    (reading ??= (async () => {
      try {
        const { rows } = await sql<{ depth: number; oldest: Date | null; retrying: number; disabled: number }>`
          select
            (select count(*) from events where dispatched_at is null) as depth,
            (select min(created_at) from events where dispatched_at is null) as oldest,
            (select count(*) from events where status = 'retrying') as retrying,
            (select count(*) from webhooks where disabled_at is not null and ${notDeleted()}) as disabled`.execute(db);
        const row = rows[0]!;
        outboxDepth.set(row.depth);
        outboxLag.set(row.oldest ? Math.max(0, (Date.now() - new Date(row.oldest).getTime()) / 1000) : 0);
        retriesWaiting.set(row.retrying);
        disabledWebhooks.set(row.disabled);
      } catch (err) {
        for (const g of [outboxLag, outboxDepth, retriesWaiting, disabledWebhooks]) g.reset();
        log.warn('engine metrics not read', { error: errorText(err) });
      } finally {
        setImmediate(() => { reading = undefined; });
      }
    })());

  const outboxLag = new Gauge({
    name: 'shiphook_outbox_lag_seconds',
    help: 'Age of the oldest published event whose delivery workflow has not been started yet (0 when the outbox is empty).',
    collect,
  });
  const outboxDepth = new Gauge({
    name: 'shiphook_outbox_depth',
    help: 'Published events whose delivery workflow has not been started yet.',
    collect,
  });
  const retriesWaiting = new Gauge({
    name: 'shiphook_events_retrying',
    help: 'Events waiting for a retry (status retrying: some URL failed and has attempts left).',
    collect,
  });
  const disabledWebhooks = new Gauge({
    name: 'shiphook_webhooks_disabled',
    help: 'Webhooks currently disabled (not deleted).',
    collect,
  });
}
