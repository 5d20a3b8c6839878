import { account, addWebhook, api, replayAll } from '../client';
import { offer } from '../delivery-scenarios';
import { round } from '../processes';
import { type BenchReceiver, startBenchReceiver } from '../receivers';
import { type BenchSystem, benchDb } from '../system';
import type { LabScenario } from './index';
import { slopesPerHour, soakSample } from './soak-samples';

/**
 * What the soak runs the engine with: retention of minutes (so the removal runs many
 * times), and a short retry schedule so that an event to a failing endpoint ends failed
 * within a minute and can be checked before retention removes it.
 */
const SOAK_ENV = { SHIPHOOK_EVENT_RETENTION: '5m', SHIPHOOK_RETENTION_EVERY: '1m', SHIPHOOK_RETRY_DELAYS: '5s,10s,20s' };
/** An event is checked once it is this old: past its last retry (35 s plus the attempts), well before retention (5 min). */
const CHECK_AFTER_MS = 120_000;

type Kind = 'healthy' | 'failing' | 'churn';
/** What each kind of event deserves: its account's endpoints all answer, one of them fails (500 or no answer), or its webhooks come and go. */
const DESERVED: Record<Kind, string[]> = { healthy: ['completed'], failing: ['failed'], churn: ['completed', 'failed'] };
/** Of every five events: three to the healthy account, one to the failing one, one to the churning one. */
const KIND_OF: Kind[] = ['healthy', 'healthy', 'healthy', 'failing', 'churn'];

/**
 * The soak: `rate` events/s for `minutes` to three accounts (two healthy endpoints; one
 * healthy, one answering 500 and one never answering; one healthy endpoint beside
 * webhooks created and deleted every 20 s). Midway, an operator replays the failing
 * account's failed events and a recovery re-sends the 500 endpoint's failed deliveries.
 * One sample a minute (soak-samples.ts), and each event's status read back once it is old
 * enough, before retention removes it. The system runs with SOAK_ENV.
 */
export const soak: LabScenario = {
  about: 'minutes of steady load to healthy, failing and churning webhooks, retention of minutes: what grows over hours (alone)',
  flags: { minutes: 'soak: its duration (default SOAK_MINUTES or 60)' },
  env: SOAK_ENV,
  run: (sys, { quick, number }) =>
    hours(sys, { minutes: number('minutes', Number(process.env.SOAK_MINUTES) || 60), rate: number('rate', 20), sampleMs: 60_000, settleMs: quick ? 60_000 : 180_000 }),
};

async function hours(sys: BenchSystem, opts: { minutes: number; rate: number; sampleMs: number; settleMs: number }) {
  const db = await benchDb(sys);
  const rx = (failWith: BenchReceiver['failWith'] = null) => startBenchReceiver().then((r) => Object.assign(r, { failWith }));
  const accounts = { healthy: await account(sys.origin, 'soak-healthy'), failing: await account(sys.origin, 'soak-failing'), churn: await account(sys.origin, 'soak-churn') };
  const receivers = { healthy: [await rx(), await rx()], failing: [await rx(), await rx(500), await rx('hang')], churn: [await rx()] };
  const hooks: Record<Kind, { id: string }[]> = { healthy: [], failing: [], churn: [] };
  for (const kind of Object.keys(receivers) as Kind[]) for (const r of receivers[kind]) hooks[kind].push(await addWebhook(sys.origin, accounts[kind].testKey, r.url));
  const churnReceiver = await rx();

  const kindOf = new Map<string, Kind>();
  const sentAt = new Map<string, number>(); // epoch ms
  const outcome = { as_deserved: {} as Record<string, number>, not_as_deserved: {} as Record<string, number>, removed_before_check: 0, publish_errors: 0 };
  const unchecked = new Set<string>();
  const check = async () => {
    const due = [...unchecked].filter((id) => Date.now() - sentAt.get(id)! >= CHECK_AFTER_MS);
    if (!due.length) return;
    const { rows } = await db.query<{ id: string; status: string }>('select id, status from events where id = any($1)', [due]);
    const status = new Map(rows.map((r) => [r.id, r.status]));
    for (const id of due) {
      const s = status.get(id);
      if (s === 'in_queue' || s === 'retrying') continue; // not finished yet: the next pass
      unchecked.delete(id);
      if (!s) { outcome.removed_before_check++; continue; }
      const key = `${kindOf.get(id)}:${s}`;
      const tally = DESERVED[kindOf.get(id)!].includes(s) ? outcome.as_deserved : outcome.not_as_deserved;
      tally[key] = (tally[key] ?? 0) + 1;
    }
  };

  const t0 = Date.now();
  const minutes: number[] = [];
  const series: Record<string, (number | null)[]> = {};
  const sample = async () => {
    const s: Record<string, number> | null = await soakSample(sys, db).catch(() => null);
    // A key absent from a sample is 0 (no workflow of that type running); a failed sample is null throughout.
    for (const key of Object.keys(s ?? {})) series[key] ??= minutes.map(() => 0);
    minutes.push(round((Date.now() - t0) / 60_000, 2));
    for (const [key, values] of Object.entries(series)) values.push(s ? (s[key] ?? 0) : null);
  };
  const midway: Record<string, unknown> = {};
  const churned = { created: 0, deleted: 0, errors: 0 };
  let churnHook: { id: string } | undefined;
  const timers = [
    setInterval(() => void sample(), opts.sampleMs),
    setInterval(() => void check().catch(() => undefined), 20_000),
    // Webhooks created and deleted throughout: each lives 20 s and receives the churn account's events meanwhile.
    setInterval(() => void (async () => {
      if (churnHook) await api(sys.origin, 'DELETE', `/v2/webhooks/${churnHook.id}`, { key: accounts.churn.testKey }).then((r) => (r.status < 300 ? churned.deleted++ : churned.errors++));
      churnHook = await addWebhook(sys.origin, accounts.churn.testKey, churnReceiver.url);
      churned.created++;
    })().catch(() => void churned.errors++), 20_000),
    setTimeout(() => void (async () => {
      midway.at_minute = round((Date.now() - t0) / 60_000, 1);
      midway.replayed_failed_events = await replayAll(sys.origin, accounts.failing.userId, 'failed').catch((err) => String(err));
      const since = new Date(Date.now() - 2 * 60_000).toISOString();
      const recover = await api(sys.origin, 'POST', `/v2/webhooks/${hooks.failing[1]!.id}/recover`, { key: accounts.failing.testKey, body: { since } });
      midway.recovery = { since, status: recover.status, body: JSON.stringify(recover.body).slice(0, 300) };
    })().catch((err) => void (midway.error = String(err))), (opts.minutes * 60_000) / 2),
  ];
  await sample();
  try {
    const user = (i: number) => accounts[KIND_OF[i % KIND_OF.length]!].userId;
    const { publishErrors } = await offer(sys, user, opts.rate, opts.minutes * 60, sentAt, (id, i) => {
      kindOf.set(id, KIND_OF[i % KIND_OF.length]!);
      unchecked.add(id);
    });
    outcome.publish_errors = publishErrors;
    // The last events: until each finished (or the bound); what is left counts as unfinished.
    const deadline = Date.now() + opts.settleMs + CHECK_AFTER_MS;
    while (unchecked.size && Date.now() < deadline) {
      await check().catch(() => undefined);
      await new Promise((r) => setTimeout(r, 5000));
    }
    await sample();
  } finally {
    for (const t of timers) clearInterval(t);
  }
  const ids = [...kindOf.keys()];
  // Nothing lost: every finished event reached every healthy endpoint of its account (the churning webhooks aside); the unfinished are counted apart.
  const healthyOf: Record<Kind, BenchReceiver[]> = { healthy: receivers.healthy, failing: [receivers.failing[0]!], churn: receivers.churn };
  const lost = ids.filter((id) => !unchecked.has(id) && healthyOf[kindOf.get(id)!].some((r) => !r.acknowledged.has(id))).length;
  await Promise.all([...Object.values(receivers).flat(), churnReceiver].map((r) => r.close()));
  await db.end();
  return {
    minutes: opts.minutes,
    offered_events_per_second: opts.rate,
    events: ids.length,
    engine_env: SOAK_ENV,
    lost_events: lost,
    outcome: { ...outcome, unfinished: unchecked.size },
    all_as_deserved: lost === 0 && unchecked.size === 0 && outcome.removed_before_check === 0 && Object.keys(outcome.not_as_deserved).length === 0 && outcome.publish_errors === 0,
    webhooks_churned: churned,
    midway,
    // Least squares over the second half of the load (the drain after it left out), per hour, beside the series' mean there.
    slopes: slopesPerHour(minutes, series, opts.minutes),
    series: { minute: minutes, ...series },
  };
}
