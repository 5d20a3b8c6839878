import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthWorkflowId } from '../../src/engine/contract';
import { publish, untilDisabled } from '../support/events';
import { type Account, call, createAccount } from '../support/http';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { eventually, type Receiver, startReceiver, status } from '../support/receiver';
import { portalLink as sharedPortalLink, untilShown } from './portal-pages';
import { startSystem, type TestSystem } from '../support/system';

/**
 * The customer portal in a real browser (headless Chromium driven by playwright-core),
 * against the real API, worker, PostgreSQL and Temporal, as a customer uses it.
 * Screenshots go to test/portal/screenshots/ (ignored by git) for a person to look at.
 */
let sys: TestSystem;
let acct: Account;
let browser: TestBrowser;
const receivers: Receiver[] = [];
const SHOTS = path.resolve('test/portal/screenshots');

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  sys = await startSystem();
  acct = await createAccount(sys);
  browser = await launchBrowser();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await Promise.all(receivers.map((r) => r.close()));
  await sys.close();
});

const portalLink = (key: string) => sharedPortalLink(sys, key);

describe('webhook portal', () => {
  it('opens from a link without the key, creates a webhook, sends a test event, shows a failing attempt, replays it, rotates the secret', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const page = await browser.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    const opened = await page.goto(await portalLink(acct.testKey));
    // The link's token is exchanged for a cookie and leaves the address bar; the key never reaches the browser.
    expect(page.url()).toMatch(/\/portal\/$/);
    expect(opened!.headers()['content-security-policy']).toContain("default-src 'none'");
    expect(await page.content()).not.toContain(acct.testKey);
    const cookies = await browser.context.cookies();
    expect(cookies.find((c) => c.name === 'shiphook_portal')).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/portal' });
    expect(JSON.stringify(cookies)).not.toContain(acct.testKey);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Webhooks');

    // Create a webhook to a local receiver, with a custom header (labels drive the form, as a screen reader would).
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('Name 1').fill('X-Tenant');
    await page.getByLabel('Value 1').fill('blue');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.waitForURL(/\/portal\/webhooks\/hook_/);
    expect(await page.locator('.notice').innerText()).toBe('Webhook added.');
    const hookId = page.url().match(/hook_[0-9a-f]{32}/)![0];
    const listed = await call(sys, 'GET', `/webhooks/${hookId}`, { key: acct.testKey });
    expect(listed.body).toMatchObject({ url: receiver.url, custom_headers: [{ name: 'X-Tenant', value: 'blue' }] });

    // Send a test event and see it arrive.
    await page.getByLabel('Event type').selectOption('tracker.created');
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.waitForURL(/\/portal\/events\/evt_/);
    const [arrived] = await receiver.waitFor(1);
    expect(arrived!.headers['x-shiphook-test']).toBe('true');
    expect(arrived!.headers['x-tenant']).toBe('blue');
    expect(arrived!.json).toMatchObject({ description: 'tracker.created', result: { object: 'Tracker' } });
    await untilShown(page, 'completed', 'the test event to be completed');
    expect(await page.locator('article.attempt').count()).toBe(1);
    await page.screenshot({ path: path.join(SHOTS, 'event-1280.png'), fullPage: true });

    // A failing endpoint: every attempt answers 500 with a body, the event fails; the page shows it.
    receiver.answer((_d, _i, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('database on fire'));
    const failing = await publish(sys, acct.user.id, 'test');
    await page.goto(page.url().replace(/evt_[0-9a-f]{32}/, failing.id));
    await untilShown(page, 'gave up', 'the event to fail');
    const attempts = page.locator('article.attempt');
    expect(await attempts.count()).toBe(4); // the test schedule: 1 + 3 retries
    expect(await attempts.first().innerText()).toContain('database on fire');
    expect(await attempts.first().innerText()).toContain('500');
    // Out of attempts: the delivery gave up, and no next retry is planned any more.
    expect(await sys.db.selectFrom('event_deliveries').select(['state', 'attempts', 'next_attempt_at']).where('event_id', '=', failing.id).execute())
      .toEqual([{ state: 'failed', attempts: 4, next_attempt_at: null }]);
    expect(await page.locator('table.deliveries td[data-label="Attempts"]').innerText()).toBe('4 attempts, all failed (up to 4)');
    expect(await page.locator('table.deliveries td[data-label="Next retry"]').innerText()).toBe('—');

    // The run of failures disables the webhook (tiny thresholds in tests); the portal shows it and re-enables it.
    receiver.answer(status(200));
    await untilDisabled(sys, acct.testKey, hookId, 30_000);
    const eventPath = new URL(page.url()).pathname;
    await page.goto(new URL(`/portal/webhooks/${hookId}`, page.url()).toString());
    expect(await page.locator('.facts .badge').innerText()).toBe('disabled');
    const health = (await sys.temporal()).workflow.getHandle(healthWorkflowId(hookId));
    const healthBefore = await eventually(async () => {
      const d = await health.describe().catch(() => undefined);
      return d?.status.name === 'RUNNING' ? d : undefined;
    }, 20_000, 'the health workflow to run');
    await page.getByRole('button', { name: 'Re-enable' }).click();
    await page.waitForURL(/notice=Re-enabled/);
    expect((await call(sys, 'GET', `/webhooks/${hookId}`, { key: acct.testKey })).body.disabled_at).toBeNull();
    // As the API's re-enable: waiting for its next delivery, and a fresh run of its health workflow.
    expect(await page.locator('.facts .badge').innerText()).toBe('waiting');
    await eventually(async () => ((await health.describe()).runId !== healthBefore.runId ? true : undefined), 20_000, 'a fresh health workflow run');

    // Fixed endpoint, then replay from the event's page.
    await page.goto(new URL(eventPath, page.url()).toString());
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.waitForURL(/notice=Replay/);
    await untilShown(page, 'completed', 'the replayed event to be completed');
    expect(await page.locator('article.attempt').count()).toBe(5);
    const api = await call(sys, 'GET', `/events/${failing.id}`, { key: acct.testKey });
    expect(api.body).toMatchObject({ status: 'completed', completed_urls: [receiver.url] });

    // Rotate the secret: shown once, and the next delivery is signed with it.
    await page.goto(new URL(`/portal/webhooks/${hookId}`, page.url()).toString());
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const secret = (await page.locator('#secret-value').innerText()).trim();
    expect(secret).toMatch(/^whsec_/);
    await page.screenshot({ path: path.join(SHOTS, 'webhook-1280.png'), fullPage: true });
    const before = receiver.deliveries.length;
    const signed = await publish(sys, acct.user.id, 'test');
    const deliveries = await receiver.waitFor(before + 1);
    const last = deliveries.at(-1)!;
    expect(new Webhook(secret).verify(last.body.toString(), last.headers as Record<string, string>)).toMatchObject({ id: signed.id });
    // …and not shown again.
    await page.reload();
    expect(await page.content()).not.toContain(secret);

    // Phone width: nothing wider than the screen but the tables' own scroll areas.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(new URL('/portal/', page.url()).toString());
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: path.join(SHOTS, 'webhooks-390.png'), fullPage: true });
    // Keyboard: the first Tab reaches the skip link.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.close();
  }, 180_000);

  it('refuses a tampered or expired link, a stale form (CSRF) and another account\'s objects', async () => {
    const page = await browser.newPage();
    const link = await portalLink(acct.testKey);
    const tampered = link.slice(0, -2) + (link.endsWith('AA') ? 'BB' : 'AA');
    const refused = await page.goto(tampered);
    expect(refused!.status()).toBe(403);
    expect(await page.locator('h1').innerText()).toBe('Link refused');

    const expiring = await portalLink(acct.testKey);
    await sys.db.updateTable('portal_sessions').set({ expires_at: new Date(Date.now() - 1000) }).where('user_id', '=', acct.user.id).execute();
    expect((await page.goto(expiring))!.status()).toBe(403);

    // A session that expires while open signs the page out.
    await page.goto(await portalLink(acct.testKey));
    expect(page.url()).toMatch(/\/portal\/$/);
    // A form posted without the session's CSRF token (as another site would) changes nothing.
    const hooksBefore = (await call(sys, 'GET', '/webhooks', { key: acct.testKey })).body.webhooks.length;
    const forged = await page.request.post(new URL('/portal/webhooks', page.url()).toString(), { form: { url: 'http://127.0.0.1:9/forged' } });
    expect(forged.status()).toBe(403);
    expect((await call(sys, 'GET', '/webhooks', { key: acct.testKey })).body.webhooks.length).toBe(hooksBefore);
    // Another account's event is not there, and neither is this account's production data.
    const other = await createAccount(sys);
    const foreign = await publish(sys, other.user.id, 'test');
    expect((await page.goto(new URL(`/portal/events/${foreign.id}`, page.url()).toString()))!.status()).toBe(404);
    const production = await publish(sys, acct.user.id, 'production');
    expect((await page.goto(new URL(`/portal/events/${production.id}`, page.url()).toString()))!.status()).toBe(404);

    await sys.db.updateTable('portal_sessions').set({ expires_at: new Date(Date.now() - 1000) }).where('user_id', '=', acct.user.id).execute();
    expect((await page.goto(new URL('/portal/', page.url()).toString()))!.status()).toBe(401);
    await page.close();
  }, 120_000);
});
