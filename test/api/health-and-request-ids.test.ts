import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { freePort } from '../../src/launcher/ports';
import { call, createAccount } from '../support/http';
import { logFile } from '../support/log-capture';
import { eventually } from '../support/receiver';
import { startSystem } from '../support/system';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const getJson = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
};

/** This test process's log lines (test/support/system.ts sends them to the suite's log folder). */
const logLines = () =>
  readFileSync(logFile(inject('logDir'), `tests-${process.pid}`), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);

describe('health endpoints', () => {
  it('the api and the worker are alive and ready: database, Temporal and migrations', async () => {
    const sys = await startSystem();
    try {
      await sys.temporal(); // the api connects to Temporal on first use; a probe before that may find it not ready yet
      const ready = { ok: true, checks: { database: { ok: true }, temporal: { ok: true }, migrations: { ok: true } } };
      expect(await getJson(`${sys.origin}/healthz`)).toEqual({ status: 200, body: { ok: true } });
      expect(await getJson(`${sys.origin}/readyz`)).toEqual({ status: 200, body: ready });
      const worker = `http://127.0.0.1:${inject('workerHttpPort')}`;
      expect(await getJson(`${worker}/healthz`)).toEqual({ status: 200, body: { ok: true } });
      expect(await getJson(`${worker}/readyz`)).toEqual({ status: 200, body: ready });
      const unknown = await getJson(`${worker}/nope`);
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('NOT_FOUND');
    } finally {
      await sys.close();
    }
  });

  it('an api with an unmigrated database and no Temporal is alive but answers /readyz 503 with the failing checks', async () => {
    const shared = new URL(inject('databaseUrl'));
    const name = `shiphook_unmigrated_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: shared.toString() });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const url = new URL(shared);
    url.pathname = `/${name}`;
    const sys = await startSystem({ databaseUrl: url.toString(), temporalAddress: `127.0.0.1:${await freePort()}` });
    try {
      expect((await getJson(`${sys.origin}/healthz`)).status).toBe(200);
      const notReady = await getJson(`${sys.origin}/readyz`);
      expect(notReady.status).toBe(503);
      expect(notReady.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', errors: [] });
      expect(notReady.body.error.message).toBe('Not ready: temporal, migrations failing.');
      expect(notReady.body.checks).toEqual({ database: { ok: true }, temporal: { ok: false }, migrations: { ok: false } });
      // Why is in the log, not in the public body.
      expect(logLines().some((l) => l.msg === 'not ready' && l.check === 'migrations' && /pending/.test(l.error))).toBe(true);

      // Through the CLI, as operators migrate (not execFileSync: this process serves the api meanwhile).
      await promisify(execFile)(process.execPath, [path.resolve('bin/shiphook.mjs'), 'migrate'], { env: { ...process.env, DATABASE_URL: url.toString() } });
      expect((await getJson(`${sys.origin}/readyz`)).body.checks).toEqual({ database: { ok: true }, temporal: { ok: false }, migrations: { ok: true } });
    } finally {
      await sys.close();
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });
});

describe('request ids', () => {
  it("honours a sent X-Request-Id, makes one otherwise, echoes it, and every log line of the request carries it", async () => {
    const sys = await startSystem();
    try {
      const acct = await createAccount(sys);
      const sent = `obs-${Date.now()}`;
      const given = await call(sys, 'GET', '/webhooks', { key: acct.testKey, headers: { 'x-request-id': sent } });
      expect(given.headers.get('x-request-id')).toBe(sent);
      const made = await call(sys, 'GET', '/webhooks', { key: acct.testKey });
      expect(made.headers.get('x-request-id')).toMatch(UUID);
      // Only a plain token is echoed and logged.
      const odd = await call(sys, 'GET', '/webhooks', { key: acct.testKey, headers: { 'x-request-id': 'two words' } });
      expect(odd.headers.get('x-request-id')).toMatch(UUID);
      const missing = await call(sys, 'GET', '/nowhere', { key: acct.testKey, headers: { 'x-request-id': `${sent}-404` } });
      expect(missing.status).toBe(404);
      expect(missing.headers.get('x-request-id')).toBe(`${sent}-404`);

      // A request's line is written once its answer is done, which may be just after the client has read it.
      const lines = await eventually(async () => { const all = logLines(); return all.some((l) => l.request_id === `${sent}-404` && l.msg === 'request') ? all : undefined; }, 10_000, 'the request lines');
      expect(lines.filter((l) => l.request_id === sent)).toEqual([expect.objectContaining({ msg: 'request', route: '/v2/webhooks', status: 200, method: 'GET' })]);
      expect(lines.filter((l) => l.request_id === `${sent}-404`)).toEqual([expect.objectContaining({ msg: 'request', route: 'unmatched', status: 404 })]);
      expect(lines.some((l) => l.request_id === 'two words')).toBe(false);
    } finally {
      await sys.close();
    }
  });

  it("an internal error's log line carries the request id the client got", async () => {
    const sys = await startSystem();
    const acct = await createAccount(sys);
    await sys.db.destroy(); // every query now fails inside the handler
    try {
      const res = await call(sys, 'GET', '/webhooks', { key: acct.testKey, headers: { 'x-request-id': `obs-err-${Date.now()}` } });
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(JSON.stringify(res.body)).not.toMatch(/destroyed|stack|at /);
      const id = res.headers.get('x-request-id')!;
      const lines = await eventually(async () => { const mine = logLines().filter((l) => l.request_id === id); return mine.some((l) => l.msg === 'request') ? mine : undefined; }, 10_000, 'the request line');
      expect(lines.some((l) => l.level === 'error' || l.level === 'warn')).toBe(true);
      expect(lines.some((l) => l.msg === 'request' && l.status === res.status)).toBe(true);
    } finally {
      sys.db.destroy = async () => {}; // already destroyed
      await sys.close();
    }
  });
});
