import type { Client } from '@temporalio/client';
import { sql } from 'kysely';
import type { Db } from './db/database';
import { pendingMigrations } from './db/migrate';
import { ApiError } from './errors/api-error';
import { log } from './log';
import { errorText } from './errors/error-text';

/**
 * Health of an api or worker process. `/healthz`: the process answers. `/readyz`:
 * it can do its work: PostgreSQL answers, Temporal answers, and the database has
 * run every migration this code knows. Each check is bounded so a hung dependency
 * makes the answer a 503, not a hung probe.
 */
const CHECK_TIMEOUT_MS = 2000;

export interface ReadinessDeps {
  db: Db;
  temporal: () => Promise<Client>;
}

/** Public (the api's /readyz needs no credentials): why a check failed goes to the log, not the body. */
export type Check = { ok: boolean };

export interface Readiness {
  ok: boolean;
  checks: { database: Check; temporal: Check; migrations: Check };
}

export async function readiness({ db, temporal }: ReadinessDeps): Promise<Readiness> {
  const [database, temporalCheck, migrations] = await Promise.all([
    check('database', async () => { await sql`select 1`.execute(db); }),
    check('temporal', async () => {
      const client = await temporal();
      await client.connection.withDeadline(Date.now() + CHECK_TIMEOUT_MS, () => client.workflowService.getSystemInfo({}));
    }),
    check('migrations', async () => {
      const pending = await pendingMigrations(db);
      if (pending.length) throw new Error(`${pending.length} pending: ${pending.join(', ')}`);
    }),
  ]);
  return { ok: database.ok && temporalCheck.ok && migrations.ok, checks: { database, temporal: temporalCheck, migrations } };
}

/** The HTTP answer of `/readyz`: 200 `{ok, checks}` or 503 with the API's error body and the checks. */
export function readinessAnswer(r: Readiness): { status: number; body: unknown } {
  if (r.ok) return { status: 200, body: r };
  const error = new ApiError('SERVICE_UNAVAILABLE', 'Not ready: ' + Object.entries(r.checks).filter(([, c]) => !c.ok).map(([name]) => name).join(', ') + ' failing.');
  return { status: error.status, body: { ...error.toBody(), checks: r.checks } };
}

async function check(name: string, fn: () => Promise<void>): Promise<Check> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS); }),
    ]);
    return { ok: true };
  } catch (err) {
    log.warn('not ready', { check: name, error: errorText(err) });
    return { ok: false };
  } finally {
    clearTimeout(timer);
  }
}
