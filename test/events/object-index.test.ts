import { type CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/account/principal';
import type { Database } from '../../src/db/database';
import type { PageParams } from '../../src/db/paginate';
import { type EventFilter, listEvents } from '../../src/events/events';
import { createAccount } from '../support/http';
import { type IsolatedSystem, isolatedSystem } from '../support/isolated';

/**
 * GET /v2/events?object_id=… and ?tracking_code=… are served by their indexes (migration
 * 2026_11_28_0302) among 100,000 events of a few accounts, alone and with the other filters
 * and a page: the plan of the very statement listEvents sends is read back with EXPLAIN,
 * planned as a one-off (custom) and as the prepared statement the api's pool reuses
 * (generic). A database of its own: these rows would slow every other test file's lists.
 */
let iso: IsolatedSystem;
let pool: pg.Pool;
/** listEvents' statements, as sent. */
let db: Kysely<Database>;
let sent: CompiledQuery | undefined;
let owner: Principal;

/** Event i (1…100,000): a tracker event (six per tracker, id and tracking code from i / 6) or, every third, a batch's. */
const evt = (i: number) => `evt_${i.toString(16).padStart(32, '0')}`;
const tracker = (i: number) => `trk_${Math.floor(i / 6).toString(16).padStart(32, '0')}`;
const trackingCode = (i: number) => `EZ${String(Math.floor(i / 6)).padStart(10, '0')}`;

beforeAll(async () => {
  iso = await isolatedSystem();
  const [a, b] = [await createAccount(iso.api), await createAccount(iso.api)];
  pool = new pg.Pool({ connectionString: iso.databaseUrl, max: 2 });
  // One statement: three of four events are the first account's, one in ten in production.
  await pool.query(
    `insert into events (id, user_id, mode, description, status, result, dispatched_at, created_at, updated_at)
     select 'evt_' || lpad(to_hex(i), 32, '0'),
            case when i % 4 = 0 then $2 else $1 end,
            case when i % 10 = 0 then 'production' else 'test' end,
            case when i % 3 = 0 then 'batch.created' else 'tracker.updated' end,
            (array['completed', 'completed', 'failed', 'retrying'])[1 + (i / 7) % 4],
            case when i % 3 = 0
              then jsonb_build_object('object', 'Batch', 'id', 'batch_' || lpad(to_hex(i / 30), 32, '0'), 'state', 'created')
              else jsonb_build_object('object', 'Tracker', 'id', 'trk_' || lpad(to_hex(i / 6), 32, '0'), 'tracking_code', 'EZ' || lpad((i / 6)::text, 10, '0'), 'status', 'in_transit')
            end,
            now(), now() - (100000 - i) * interval '1 second', now()
     from generate_series(1, 100000) i`,
    [a.user.id, b.user.id],
  );
  await pool.query('analyze events');
  owner = { user: a.user, mode: 'test', keyId: 'ak_plan' } as Principal;
  db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: (e) => void (e.level === 'query' && (sent = e.query)) });
}, 180_000);
afterAll(async () => {
  await db?.destroy();
  await iso?.close();
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

/** Runs listEvents; the plan of the statement it sent, custom and generic, as the scans they make. */
async function plansOf(filter: EventFilter, page: Partial<PageParams> = {}) {
  sent = undefined;
  const listed = await listEvents(db, owner, { pageSize: 20, ...page }, filter);
  const { sql, parameters } = sent!;
  const client = await pool.connect();
  try {
    const custom = await client.query(`explain (format json) ${sql}`, parameters as unknown[]);
    await client.query('set plan_cache_mode = force_generic_plan');
    await client.query(`prepare listed as ${sql}`);
    const values = parameters.map((p) => (p instanceof Date ? `'${p.toISOString()}'` : typeof p === 'number' ? String(p) : client.escapeLiteral(String(p))));
    const generic = await client.query(`explain (format json) execute listed(${values.join(', ')})`);
    return { listed, custom: scans(custom.rows), generic: scans(generic.rows) };
  } finally {
    await client.query('deallocate all; reset plan_cache_mode');
    client.release();
  }
}
const scans = (rows: { 'QUERY PLAN': { Plan: PlanNode }[] }[]) =>
  nodes(rows[0]!['QUERY PLAN'][0]!.Plan).filter((n) => /Scan/.test(n['Node Type'])).map((n) => ({ type: n['Node Type'], index: n['Index Name'], cond: n['Index Cond'] }));

/** The only scan is of `index`, with the object's expression in its condition. */
function expectServedBy(plan: ReturnType<typeof scans>, index: string, expression: string) {
  expect(plan.map((s) => s.index)).toEqual([index]);
  expect(plan[0]!.type).toMatch(/^Index( Only)? Scan/);
  expect(plan[0]!.cond).toContain(expression);
}
const OBJECT = { index: 'events_object_idx', expression: "(result ->> 'id'::text) =" };
const CODE = { index: 'events_tracking_code_idx', expression: "upper((result ->> 'tracking_code'::text)) =" };

describe('GET /v2/events by object among 100,000 events', () => {
  // Tracker 10000's events of the first account in test mode: 60001 and 60002 (retrying), 60005 (completed).
  const i = 60_001;
  const cases: { name: string; filter: EventFilter; page?: Partial<PageParams>; by: typeof OBJECT; want: string[] }[] = [
    { name: 'object_id', filter: { objectId: tracker(i) }, by: OBJECT, want: [60_005, 60_002, 60_001].map(evt) },
    { name: 'tracking_code (any case)', filter: { trackingCode: trackingCode(i).toLowerCase() }, by: CODE, want: [60_005, 60_002, 60_001].map(evt) },
    { name: 'object_id and status', filter: { objectId: tracker(i), status: 'retrying' }, by: OBJECT, want: [60_002, 60_001].map(evt) },
    { name: 'object_id and description', filter: { objectId: tracker(i), description: 'batch.created' }, by: OBJECT, want: [] },
    { name: 'tracking_code, status and description', filter: { trackingCode: trackingCode(i), status: 'completed', description: 'tracker.updated' }, by: CODE, want: [evt(60_005)] },
    { name: 'object_id and status, a before_id page', filter: { objectId: tracker(i), status: 'retrying' }, page: { pageSize: 1, beforeId: evt(60_005) }, by: OBJECT, want: [evt(60_002)] },
    { name: 'tracking_code, description, an after_id page within datetimes', filter: { trackingCode: trackingCode(i), description: 'tracker.updated' }, page: { afterId: evt(60_001), start: new Date(Date.now() - 86_400_000), end: new Date() }, by: CODE, want: [60_005, 60_002].map(evt) },
  ];
  for (const c of cases) {
    it(`${c.name}: its index, planned once or prepared`, async () => {
      const { listed, custom, generic } = await plansOf(c.filter, c.page);
      expect(listed.events.map((e) => e.id)).toEqual(c.want);
      expectServedBy(custom, c.by.index, c.by.expression);
      expectServedBy(generic, c.by.index, c.by.expression);
    });
  }
});
