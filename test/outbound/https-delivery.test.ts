import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOOPBACK_NETWORKS } from '../../src/config';
import { parseNetworks } from '../../src/outbound/address-guard';
import { eventStatus, publish, webhook } from '../support/events';
import { call, createAccount, errorOf } from '../support/http';
import { isolatedSystem, type IsolatedSystem } from '../support/isolated';
import { type Receiver, startReceiver } from '../support/receiver';
import { createTestCa, expiredValidity } from '../support/test-ca';

/**
 * The production delivery path: a worker process with http disallowed, trusting a
 * test CA through SHIPHOOK_WEBHOOK_CA_FILE (verification stays on), delivering to
 * real HTTPS receivers on this machine (`localhost`, an allowed network).
 */
let iso: IsolatedSystem;
let dir: string;
const receivers: Record<string, Receiver> = {};

beforeAll(async () => {
  const ca = createTestCa();
  const rogue = createTestCa('an untrusted CA');
  dir = mkdtempSync(path.join(tmpdir(), 'shiphook-ca-'));
  const caFile = path.join(dir, 'ca.pem');
  writeFileSync(caFile, ca.cert);
  const tls = (pem: { key: string; cert: string }, extra = {}) => ({ tls: { ...pem, ...extra }, host: 'localhost' });
  receivers.valid = await startReceiver(undefined, tls(ca.issue(['localhost'])));
  receivers.expired = await startReceiver(undefined, tls(ca.issue(['localhost'], expiredValidity())));
  receivers.wrongHost = await startReceiver(undefined, tls(ca.issue(['hooks.example.com'])));
  receivers.untrusted = await startReceiver(undefined, tls(rogue.issue(['localhost'])));
  receivers.oldTls = await startReceiver(undefined, tls(ca.issue(['localhost']), { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' }));
  receivers.plain = await startReceiver();

  iso = await isolatedSystem({ webhooks: { allowedNetworks: parseNetworks(LOOPBACK_NETWORKS), allowHttp: false } });
  await iso.worker({ env: { SHIPHOOK_WEBHOOK_ALLOW_HTTP: 'false', SHIPHOOK_WEBHOOK_CA_FILE: caFile } });
});
afterAll(async () => {
  await iso?.close();
  await Promise.all(Object.values(receivers).map((r) => r.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('delivery over HTTPS with http disallowed', () => {
  it('refuses http:// at creation', async () => {
    const acct = await createAccount(iso.api);
    const res = await call(iso.api, 'POST', '/webhooks', { key: acct.testKey, body: { webhook: { url: receivers.plain!.url } } });
    expect(res.status).toBe(422);
    expect(errorOf(res)).toMatchObject({ code: 'WEBHOOK.INVALID', errors: [{ field: 'webhook.url', message: 'must use https' }] });
    expect((await call(iso.api, 'GET', '/webhooks', { key: acct.testKey })).body.webhooks).toEqual([]);
  });

  it('a valid certificate succeeds; expired, wrong host, untrusted CA and TLS < 1.2 each fail with a clear Payload error', async () => {
    const acct = await createAccount(iso.api);
    const hooks: Record<string, string> = {};
    for (const [name, r] of Object.entries(receivers)) if (name !== 'plain') hooks[name] = (await webhook(iso.api, acct.testKey, r.url)).id;
    // Stored before the rules tightened (or written behind the API's back): the worker refuses them itself.
    const metadata = (await webhook(iso.api, acct.testKey, 'https://localhost:1/metadata')).id;
    const http = (await webhook(iso.api, acct.testKey, 'https://localhost:1/http')).id;
    await iso.api.db.updateTable('webhooks').set({ url: 'https://169.254.169.254/latest/meta-data' }).where('id', '=', metadata).execute();
    await iso.api.db.updateTable('webhooks').set({ url: receivers.plain!.url }).where('id', '=', http).execute();

    const event = await publish(iso.api, acct.user.id, 'test');
    const done = await eventStatus(iso.api, acct.testKey, event.id, 'failed', 40_000);
    expect(done.completed_urls).toEqual([receivers.valid!.url]);
    // At least once (a busy machine may repeat the first attempt): every delivery is this event.
    expect(receivers.valid!.deliveries.length).toBeGreaterThanOrEqual(1);
    expect(new Set(receivers.valid!.deliveries.map((d) => d.json.id))).toEqual(new Set([event.id]));
    expect(receivers.plain!.deliveries).toHaveLength(0);

    const payloads = (await call(iso.api, 'GET', `/events/${event.id}/payloads`, { key: acct.testKey })).body.payloads as any[];
    const errorFor = (url: string) => {
      const mine = payloads.filter((p) => p.request_url === url);
      expect(mine.length, url).toBeGreaterThan(0);
      return mine.map((p) => `${p.response_code} ${p.response_body}`);
    };
    expect(new Set(errorFor(receivers.valid!.url))).toEqual(new Set(['200 ok']));
    expect(new Set(errorFor(receivers.expired!.url))).toEqual(new Set(['0 shiphook: TLS: the certificate has expired or is not yet valid']));
    expect(new Set(errorFor(receivers.wrongHost!.url))).toEqual(new Set(['0 shiphook: TLS: the certificate does not match the host name']));
    expect(new Set(errorFor(receivers.untrusted!.url))).toEqual(new Set(['0 shiphook: TLS: the certificate is not signed by a trusted authority']));
    expect(new Set(errorFor(receivers.oldTls!.url))).toEqual(new Set(['0 shiphook: TLS: the endpoint offers no TLS 1.2 or later']));
    expect(new Set(errorFor('https://169.254.169.254/latest/meta-data'))).toEqual(new Set(['0 shiphook: the host resolves to an address webhooks may not reach (not public)']));
    expect(new Set(errorFor(receivers.plain!.url))).toEqual(new Set(['0 shiphook: webhook URL must use https']));
    for (const name of ['expired', 'wrongHost', 'untrusted', 'oldTls']) expect(receivers[name]!.deliveries, name).toHaveLength(0);
  });
});
