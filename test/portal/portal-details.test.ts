import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { untilDisabled, eventStatus, publish, webhook } from '../support/events';
import { type Account, call, createAccount } from '../support/http';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { eventually, type Receiver, startReceiver, status } from '../support/receiver';
import { startSystem, type TestSystem } from '../support/system';
import { portalLink as sharedPortalLink, untilShown } from './portal-pages';

/**
 * The portal's details in a real browser: the one-time link and its cookie session,
 * write-only header values, each URL's attempt count and next retry on an event's page,
 * a webhook's recent deliveries and 24 h chart, and the phone layout at 390 px.
 *
 * Replays started by this file's API use its own retry schedule (long waits, so a
 * pending retry can be looked at); the suite's worker dispatches new events with the
 * suite's short one.
 */
const SCHEDULE = [6_000, 6_000, 6_000];
const SHOTS = path.resolve('test/portal/screenshots');
let sys: TestSystem;
let browser: TestBrowser;
const receivers: Receiver[] = [];

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  sys = await startSystem({ retryDelaysMs: SCHEDULE });
  browser = await launchBrowser();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await Promise.all(receivers.map((r) => r.close()));
  await sys.close();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

const portalLink = (key: string) => sharedPortalLink(sys, key);

/** A page signed in to the portal of `acct`'s test mode (a fresh link, used once). */
async function signedIn(acct: Account): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(await portalLink(acct.testKey));
  expect(page.url()).toMatch(/\/portal\/$/);
  return page;
}

const portal = (p: string) => new URL(`/portal${p}`, sys.origin).toString();

describe('one-time portal links', () => {
  it('opens once, keeps the session in its cookie, refuses the second visit and an expired session', async () => {
    const acct = await createAccount(sys);
    const link = await portalLink(acct.testKey);
    const linkToken = link.split('/').at(-1)!;
    // Only a digest of the link's token is stored.
    const stored = await sys.db.selectFrom('portal_sessions').selectAll().where('user_id', '=', acct.user.id).executeTakeFirstOrThrow();
    expect(stored.token_digest.equals(createHash('sha256').update(linkToken).digest())).toBe(true);
    expect(JSON.stringify(stored)).not.toContain(linkToken);

    const page = await browser.newPage();
    await page.goto(link);
    expect(page.url()).toBe(portal('/'));
    const cookie = (await browser.context.cookies(portal('/'))).find((c) => c.name === 'shiphook_portal')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/portal', secure: false });
    // The cookie holds the session's own token, not the link's; the database only its digest.
    expect(cookie.value).not.toBe(linkToken);
    const used = await sys.db.selectFrom('portal_sessions').selectAll().where('id', '=', stored.id).executeTakeFirstOrThrow();
    expect(used.link_used_at).not.toBeNull();
    expect(used.session_digest!.equals(createHash('sha256').update(cookie.value).digest())).toBe(true);
    expect(cookie.expires * 1000).toBeCloseTo(used.expires_at.getTime(), -4);

    // The session lives in the cookie: pages open without the link.
    expect((await page.goto(portal('/events')))!.status()).toBe(200);

    // The second visit of the link is refused, in this browser and in any other; it says why and what to do.
    const again = await page.goto(link);
    expect(again!.status()).toBe(410);
    expect(await page.locator('h1').innerText()).toBe('Link already used');
    const text = await page.locator('main').innerText();
    expect(text).toContain('each link opens the portal once');
    expect(text).toContain('POST /v2/portal_sessions');
    const elsewhere = await fetch(link, { redirect: 'manual' });
    expect(elsewhere.status).toBe(410);
    expect(elsewhere.headers.get('set-cookie')).toBeNull();
    // …and it did not end the session it opened.
    expect((await page.goto(portal('/')))!.status()).toBe(200);

    // An expired session is refused.
    await sys.db.updateTable('portal_sessions').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', stored.id).execute();
    expect((await page.goto(portal('/')))!.status()).toBe(401);
    expect(await page.locator('h1').innerText()).toBe('Signed out');
    await page.close();
  }, 60_000);

  it('works when opened from another site (a mail or chat page links to it)', async () => {
    const acct = await createAccount(sys);
    const link = await portalLink(acct.testKey);
    // A page on another site (localhost is another site than 127.0.0.1) with the link on it.
    const site = await receiver();
    site.answer((_d, _i, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><a id="go" href="${link}">Open the webhook portal</a>`));
    const page = await browser.newPage();
    await page.goto(site.url.replace('127.0.0.1', 'localhost'));
    await page.click('#go');
    await page.waitForURL(portal('/'));
    expect(await page.locator('h1').innerText()).toBe('Webhooks');
    await page.close();
  }, 60_000);

  it('marks the cookie Secure when the portal is served over https (SHIPHOOK_PUBLIC_URL behind a TLS proxy)', async () => {
    const behindProxy = await startSystem({ publicUrl: 'https://portal.example' });
    try {
      const acct = await createAccount(behindProxy);
      const res = await call(behindProxy, 'POST', '/portal_sessions', { key: acct.testKey });
      expect(res.body.url).toMatch(/^https:\/\/portal\.example\/portal\/login\//);
      // As the proxy forwards it: plain http to this process.
      const opened = await fetch(`${behindProxy.origin}${new URL(res.body.url).pathname}`, { redirect: 'manual' });
      expect(opened.status).toBe(303);
      expect(opened.headers.get('location')).toBe('/portal/');
      expect(opened.headers.get('set-cookie')).toMatch(/^shiphook_portal=[A-Za-z0-9_-]{43}; Path=\/portal; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$/);
    } finally {
      await behindProxy.close();
    }
  }, 60_000);

  it('signing out ends the session for whoever holds its cookie', async () => {
    const acct = await createAccount(sys);
    const page = await signedIn(acct);
    const cookie = (await browser.context.cookies(portal('/'))).find((c) => c.name === 'shiphook_portal')!;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForLoadState();
    const replayed = await fetch(portal('/'), { headers: { cookie: `shiphook_portal=${cookie.value}` } });
    expect(replayed.status).toBe(401);
    await page.close();
  }, 60_000);
});

describe('webhook pages', () => {
  it('never renders custom header values, and saving without re-typing them keeps them', async () => {
    const acct = await createAccount(sys);
    const r = await receiver();
    const hook = await webhook(sys, acct.testKey, r.url, {
      custom_headers: [{ name: 'X-Api-Key', value: 'value-of-the-key-7f3a' }, { name: 'X-Tenant', value: 'tenant-value-91c2' }],
    });
    const page = await signedIn(acct);
    await page.goto(portal(`/webhooks/${hook.id}`));
    const html = await page.content();
    expect(html).not.toContain('value-of-the-key-7f3a');
    expect(html).not.toContain('tenant-value-91c2');
    expect(await page.getByLabel('Name 1').inputValue()).toBe('X-Api-Key');
    expect(await page.getByLabel('Value 1').inputValue()).toBe('');
    expect(await page.getByLabel('Value 1').getAttribute('placeholder')).toBe('unchanged');
    expect(await page.locator('main').innerText()).toContain('Header values are write-only');

    // Save without touching the values: both kept (read back through the API).
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(/notice=Saved/);
    const read = async () => (await call(sys, 'GET', `/webhooks/${hook.id}`, { key: acct.testKey })).body.custom_headers;
    expect(await read()).toEqual([{ name: 'X-Api-Key', value: 'value-of-the-key-7f3a' }, { name: 'X-Tenant', value: 'tenant-value-91c2' }]);
    expect(await page.content()).not.toContain('tenant-value-91c2');

    // A typed value replaces that header's value only; a cleared name removes its header.
    await page.getByLabel('Value 2').fill('tenant-value-new');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(/notice=Saved/);
    expect(await read()).toEqual([{ name: 'X-Api-Key', value: 'value-of-the-key-7f3a' }, { name: 'X-Tenant', value: 'tenant-value-new' }]);
    await page.getByLabel('Name 2').fill('');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(/notice=Saved/);
    expect(await read()).toEqual([{ name: 'X-Api-Key', value: 'value-of-the-key-7f3a' }]);

    // A new header with no value is refused, not saved empty; nothing changes.
    await page.getByLabel('Name 3').fill('X-New');
    await page.getByRole('button', { name: 'Save' }).click();
    expect(await page.locator('.error').count()).toBe(1);
    expect(await read()).toEqual([{ name: 'X-Api-Key', value: 'value-of-the-key-7f3a' }]);

    // The delivery carries the value; the event page names the header and hides its value.
    await page.goto(portal(`/webhooks/${hook.id}`));
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.waitForURL(/\/portal\/events\/evt_/);
    const [delivered] = await r.waitFor(1);
    expect(delivered!.headers['x-api-key']).toBe('value-of-the-key-7f3a');
    await untilShown(page, /Attempt 1 of 4: 200/, 'the attempt to be listed');
    const eventHtml = await page.content();
    expect(eventHtml).toContain('X-Api-Key');
    expect(eventHtml).not.toContain('value-of-the-key-7f3a');
    await page.close();
  }, 90_000);

  it('shows recent deliveries and the 24 h success rate as a server-drawn chart, under the strict CSP', async () => {
    const acct = await createAccount(sys);
    const r = await receiver();
    r.answer((_d, i, res) => res.writeHead(i === 0 ? 200 : 503).end());
    const hook = await webhook(sys, acct.testKey, r.url);
    const first = await publish(sys, acct.user.id, 'test');
    await r.waitFor(1);
    await eventStatus(sys, acct.testKey, first.id, 'completed', 20_000);
    // The second event fails every attempt of the suite's schedule.
    const second = await publish(sys, acct.user.id, 'test');
    await eventStatus(sys, acct.testKey, second.id, 'failed', 30_000);

    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) violations.push(m.text()); });
    await page.goto(await portalLink(acct.testKey));
    const shown = await page.goto(portal(`/webhooks/${hook.id}`));
    expect(shown!.headers()['content-security-policy']).toMatch(/default-src 'none'/);
    expect(shown!.headers()['content-security-policy']).not.toContain('unsafe-inline');

    const recent = page.locator('section[aria-labelledby="recent"] tbody tr');
    const attempts = await sys.db.selectFrom('payloads').select(['event_id', 'response_code']).where('webhook_id', '=', hook.id).orderBy('id', 'desc').execute();
    expect(await recent.count()).toBe(attempts.length);
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    // Newest first: the second event's failure; the oldest row is the first event's success.
    expect(await recent.first().innerText()).toContain('503');
    expect(await recent.first().locator('a').getAttribute('href')).toBe(`/portal/events/${second.id}`);
    expect(await recent.last().innerText()).toMatch(/200[\s\S]*\d+ ms/);
    await recent.last().locator('a').click();
    await page.waitForURL(portal(`/events/${first.id}`));
    await page.goBack();

    // The chart: inline SVG (no script, no inline style), this hour's bar split into succeeded and failed.
    const chart = page.locator('figure.chart');
    const succeeded = attempts.filter((a) => a.response_code === 200).length;
    expect(succeeded).toBe(1);
    expect(await chart.locator('figcaption').innerText()).toContain(`${Math.floor((1 / attempts.length) * 1000) / 10}% of ${attempts.length} attempts succeeded`);
    expect(await chart.locator('svg g').count()).toBe(24);
    const now = chart.locator('svg g').last();
    expect(await now.locator('title').textContent()).toContain(`${attempts.length} attempts, 1 succeeded`);
    expect(await now.locator('rect.ok').count()).toBe(1);
    expect(await now.locator('rect.bad').count()).toBe(1);
    const okHeight = Math.round((1 / attempts.length) * 48);
    expect(Number(await now.locator('rect.ok').getAttribute('height'))).toBe(okHeight);
    expect(Number(await now.locator('rect.bad').getAttribute('height'))).toBe(48 - okHeight);
    expect(await chart.locator('svg g').first().locator('rect.none').count()).toBe(1);
    // The bars are coloured by the stylesheet, so the CSP let it apply.
    expect(await now.locator('rect.ok').evaluate((el) => getComputedStyle(el).fill)).toBe('rgb(23, 121, 74)');
    expect(await page.locator('script, [style]').count()).toBe(0);
    expect(violations).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'webhook-activity-1280.png'), fullPage: true });

    // Another account does not see this webhook's page.
    const other = await signedIn(await createAccount(sys));
    expect((await other.goto(portal(`/webhooks/${hook.id}`)))!.status()).toBe(404);
    await other.close();
    await page.close();
  }, 90_000);
});

describe('recovering from the webhook page', () => {
  it('redelivers what failed since the time given, through a CSRF-protected form', async () => {
    const acct = await createAccount(sys);
    const r = await receiver();
    r.answer(status(500));
    const hook = await webhook(sys, acct.testKey, r.url);
    const before = new Date(Date.now() - 60_000);
    const missed = await publish(sys, acct.user.id, 'test');
    await eventStatus(sys, acct.testKey, missed.id, 'failed', 30_000);
    r.answer(status(200));

    // Four failures over more than a second disable it (the suite's thresholds), maybe only after the
    // event failed: a recovery started before that would stop at the disable. The page says to re-enable first.
    await untilDisabled(sys, acct.testKey, hook.id);
    const page = await signedIn(acct);
    await page.goto(portal(`/webhooks/${hook.id}`));
    await page.getByLabel('Redeliver what failed since').fill(before.toISOString().slice(0, 16));
    await page.getByRole('button', { name: 'Redeliver' }).click();
    expect(await page.locator('.error').innerText()).toContain('re-enable it with the Re-enable button just below');
    await page.getByRole('button', { name: 'Re-enable' }).click();
    await page.waitForURL(/notice=Re-enabled/);
    // A form posted without the session's CSRF token changes nothing.
    const forged = await page.request.post(portal(`/webhooks/${hook.id}/recover`), { form: { since: before.toISOString().slice(0, 16) } });
    expect(forged.status()).toBe(403);
    expect(r.deliveries.length).toBe(4);

    await page.getByLabel('Redeliver what failed since').fill(before.toISOString().slice(0, 16));
    await page.getByRole('button', { name: 'Redeliver' }).click();
    await page.waitForURL(/notice=Redelivering/);
    expect(await page.locator('.notice').innerText()).toMatch(/^Redelivering 1 event that did not reach this webhook since/);
    await r.waitFor(5);
    expect(r.deliveries[4]!.json.id).toBe(missed.id);
    await eventStatus(sys, acct.testKey, missed.id, 'completed', 30_000);

    // Nothing left: the next recovery of the window says so; a window too wide is refused with the reason.
    await page.getByLabel('Redeliver what failed since').fill(before.toISOString().slice(0, 16));
    await page.getByRole('button', { name: 'Redeliver' }).click();
    await page.waitForURL(/notice=Nothing/);
    await page.getByLabel('Redeliver what failed since').fill('2020-01-01T00:00');
    await page.getByRole('button', { name: 'Redeliver' }).click();
    expect(await page.locator('.error').innerText()).toContain('too wide');
    expect(r.deliveries.length).toBe(5);
    await page.close();
  }, 90_000);
});

describe('event page', () => {
  it("shows each URL's attempts so far and its next retry (attempt n of N), recorded with the failed attempt and cleared by the success", async () => {
    const acct = await createAccount(sys);
    // An event with nothing to deliver to, then a failing webhook, and a replay to every webhook:
    // this file's API starts the run, with its long schedule.
    const event = await publish(sys, acct.user.id, 'test');
    await eventStatus(sys, acct.testKey, event.id, 'completed', 20_000);
    const r = await receiver();
    r.answer(status(500));
    const hook = await webhook(sys, acct.testKey, `${r.url}/orders/v1/acme.example?tenant=42&region=eu`);
    expect((await call(sys, 'POST', `/events/${event.id}/replay`, { key: acct.testKey, body: { all: true } })).status).toBe(200);
    const delivery = () => sys.db.selectFrom('event_deliveries').selectAll().where('event_id', '=', event.id).where('webhook_id', '=', hook.id).executeTakeFirstOrThrow();

    // The first attempt fails: the same update that counts it plans the next one.
    const afterFirst = await eventually(async () => {
      const d = await delivery();
      return d.attempts === 1 ? d : undefined;
    }, 20_000, 'the first attempt to be recorded');
    expect(afterFirst.state).toBe('pending');
    const firstPayload = await sys.db.selectFrom('payloads').select('created_at').where('event_id', '=', event.id).executeTakeFirstOrThrow();
    const planned = afterFirst.next_attempt_at!.getTime() - firstPayload.created_at.getTime();
    expect(planned).toBeGreaterThan(SCHEDULE[0]! * 0.8 - 1_000);
    expect(planned).toBeLessThan(SCHEDULE[0]! * 1.2 + 1_000);

    // The second attempt fails too (a retry: recorded in one statement); the page shows it.
    const page = await signedIn(acct);
    const afterSecond = await eventually(async () => {
      const d = await delivery();
      return d.attempts === 2 ? d : undefined;
    }, 20_000, 'the second attempt to be recorded');
    await page.goto(portal(`/events/${event.id}`));
    expect(afterSecond.next_attempt_at!.getTime()).toBeGreaterThan(afterFirst.next_attempt_at!.getTime());
    const row = page.locator('table.deliveries tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.locator('td[data-label="Attempts"]').innerText()).toBe('2 attempts so far, both failed (up to 4)');
    const next = row.locator('td[data-label="Next retry"]');
    expect(await next.locator('time').getAttribute('datetime')).toBe(afterSecond.next_attempt_at!.toISOString().replace(/\.\d{3}Z$/, 'Z'));
    expect(await next.innerText()).toContain('(attempt 3 of 4)');
    expect(await row.locator('th a').getAttribute('href')).toBe(`/portal/webhooks/${hook.id}`);
    await page.screenshot({ path: path.join(SHOTS, 'event-retrying-1280.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(SHOTS, 'event-retrying-390.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });

    // The endpoint recovers: the third attempt delivers, and the planned retry is cleared.
    r.answer(status(200));
    await untilShown(page, 'delivered', 'the delivery to succeed');
    const done = await delivery();
    expect(done).toMatchObject({ state: 'completed', attempts: 3, next_attempt_at: null });
    expect(await row.locator('td[data-label="Attempts"]').innerText()).toBe('3 attempts: 2 failed, then delivered (up to 4)');
    expect(await row.locator('td[data-label="Next retry"]').innerText()).toBe('—');
    await page.close();
  }, 90_000);
});

describe('the event page after a replay', () => {
  it('numbers each attempt within its run and sums them up as the list shows them: 2 failed, then delivered by the redelivery', async () => {
    const acct = await createAccount(sys);
    const r = await receiver();
    // Attempt 1 fails, attempt 2 asks for half a minute: the event is replayed from the portal meanwhile, and delivered.
    r.answer((d, i, res) => (i === 0 ? status(500) : i === 1 ? status(503, { 'retry-after': '30' }) : status(200))(d, i, res));
    await webhook(sys, acct.testKey, r.url);
    const event = await publish(sys, acct.user.id, 'test');
    await r.waitFor(2);
    const page = await signedIn(acct);
    await page.goto(portal(`/events/${event.id}`));
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.waitForURL(/notice=Replay/);
    await untilShown(page, 'delivered', 'the redelivery');

    const row = page.locator('table.deliveries tbody tr');
    expect(await row.locator('td[data-label="Attempts"]').innerText()).toBe('3 attempts: 2 failed, then delivered (first delivery and 1 redelivery, up to 4 attempts each)');
    const cards = await page.locator('article.attempt h3').allInnerTexts();
    expect(cards.map((c) => c.replace(/ after .*$/, ''))).toEqual(['First delivery, attempt 1 of 4: 500', 'First delivery, attempt 2 of 4: 503', 'Redelivery, attempt 1 of 4: 200']);
    await page.screenshot({ path: path.join(SHOTS, 'event-redelivered-1280.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(SHOTS, 'event-redelivered-390.png'), fullPage: true });
    expect(r.deliveries).toHaveLength(3);
    await page.close();
  }, 90_000);
});

describe('a disabled webhook in the portal', () => {
  it('puts its Re-enable button first on the page, where a refused redelivery on a phone lands, and says to use it', async () => {
    const acct = await createAccount(sys);
    const r = await receiver();
    const hook = await webhook(sys, acct.testKey, r.url);
    // Twenty deliveries make the page long on a phone (a card each), then a 410 disables the webhook.
    const before = new Date(Date.now() - 60_000).toISOString().slice(0, 16);
    for (let i = 0; i < 20; i++) await publish(sys, acct.user.id, 'test');
    await r.waitFor(20);
    r.answer(status(410));
    await publish(sys, acct.user.id, 'test');
    await untilDisabled(sys, acct.testKey, hook.id, 20_000);

    const page = await signedIn(acct);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(portal(`/webhooks/${hook.id}`));
    expect(await page.locator('section.disabled').innerText()).toContain('The endpoint answered 410 Gone');
    // The customer scrolls down to the form and asks for a redelivery: refused, with the page's own button named…
    await page.getByLabel('Redeliver what failed since').scrollIntoViewIfNeeded();
    expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(2_000);
    await page.getByLabel('Redeliver what failed since').fill(before);
    await page.getByRole('button', { name: 'Redeliver' }).click();
    const error = await page.locator('.error').innerText();
    expect(error).toContain('re-enable it with the Re-enable button just below');
    expect(error).not.toContain('PATCH');
    // …and that button in the first screenful of the page the answer shows.
    const button = await page.getByRole('button', { name: 'Re-enable' }).boundingBox();
    expect(button!.y + button!.height).toBeLessThan(844);
    await page.screenshot({ path: path.join(SHOTS, 'webhook-disabled-390-refused.png') }); // what the phone shows
    await page.screenshot({ path: path.join(SHOTS, 'webhook-disabled-390.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: path.join(SHOTS, 'webhook-disabled-1280-refused.png') });
    await page.screenshot({ path: path.join(SHOTS, 'webhook-disabled-1280.png'), fullPage: true });

    // A replay on the event's page is refused the same way: pointed to the webhook's button.
    const failed = (await call(sys, 'GET', '/events?status=failed&page_size=1', { key: acct.testKey })).body.events[0];
    await page.goto(portal(`/events/${failed.id}`));
    await page.getByRole('button', { name: 'Replay' }).click();
    expect(await page.locator('.error').innerText()).toContain('re-enable it with the button at the top of its page');

    await page.goto(portal(`/webhooks/${hook.id}`));
    await page.getByRole('button', { name: 'Re-enable' }).click();
    await page.waitForURL(/notice=Re-enabled/);
    expect(await page.locator('section.disabled').count()).toBe(0);
    await page.close();
  }, 120_000);
});

describe('phone width (390 px)', () => {
  /** Every cell of every table row is displayed and inside the viewport; the page itself does not scroll sideways. */
  async function fitsThePhone(page: Page, what: string) {
    const { scrollWidth, cells, outside } = await page.evaluate(() => {
      const all = [...document.querySelectorAll('table tr > *')].filter((c) => c.parentElement!.parentElement!.tagName !== 'THEAD');
      const bad = all.filter((c) => {
        const r = c.getBoundingClientRect();
        return r.width === 0 || r.height === 0 || r.left < 0 || r.right > window.innerWidth || getComputedStyle(c).visibility !== 'visible';
      });
      return { scrollWidth: document.documentElement.scrollWidth, cells: all.length, outside: bad.map((c) => c.textContent!.slice(0, 60)) };
    });
    expect(cells, `${what}: table cells`).toBeGreaterThan(0);
    expect(outside, `${what}: cells not shown inside the viewport`).toEqual([]);
    expect(scrollWidth, `${what}: page width`).toBeLessThanOrEqual(390);
  }

  /** Where each `.url` element wraps: the character before every line break. */
  async function urlBreaks(page: Page): Promise<string[]> {
    return page.evaluate(() => {
      const before: string[] = [];
      for (const el of document.querySelectorAll('.url')) {
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        let lastTop: number | undefined;
        let lastChar = '';
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const text = node.textContent!;
          for (let i = 0; i < text.length; i++) {
            if (/\s/.test(text[i]!)) continue;
            const range = document.createRange();
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            const top = range.getClientRects()[0]?.top;
            if (top === undefined) continue;
            if (lastTop !== undefined && top > lastTop + 2) before.push(lastChar);
            lastTop = top;
            lastChar = text[i]!;
          }
        }
      }
      return before;
    });
  }

  it('shows every column of every table as stacked rows, and wraps URLs only after their separators', async () => {
    const acct = await createAccount(sys);
    const r = await receiver();
    const hook = await webhook(sys, acct.testKey, `${r.url}/integrations/shipping-notifications/v2/acme-corporation.example/webhooks?tenant=acme-corporation-eu&region=eu-west-1&format=json`, {
      custom_headers: [{ name: 'X-Tenant', value: 'acme' }],
    });
    const events = [await publish(sys, acct.user.id, 'test'), await publish(sys, acct.user.id, 'test')];
    await r.waitFor(2);
    await eventStatus(sys, acct.testKey, events[1]!.id, 'completed', 20_000);

    const page = await signedIn(acct);
    const pages = { webhooks: '/', events: '/events', event: `/events/${events[1]!.id}`, webhook: `/webhooks/${hook.id}` };
    let breaks: string[] = [];
    for (const [name, p] of Object.entries(pages)) {
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(portal(p));
      await page.screenshot({ path: path.join(SHOTS, `phone-${name}-1280.png`), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.locator('details').evaluateAll((all) => all.forEach((d) => ((d as HTMLDetailsElement).open = true)));
      await fitsThePhone(page, name);
      breaks = breaks.concat(await urlBreaks(page));
      await page.screenshot({ path: path.join(SHOTS, `phone-${name}-390.png`), fullPage: true });
    }
    // The long URL had to wrap on the phone, and it did so only after / . ? & = (or a hyphen
    // of the URL's own, where browsers may wrap too), never inside a word.
    expect(breaks.length).toBeGreaterThan(0);
    expect(breaks.filter((c) => !'/.?&=#-'.includes(c))).toEqual([]);
    // The events table's Status column is there on the phone, labelled.
    await page.goto(portal('/events'));
    const status = page.locator('tbody tr').first().locator('td[data-label="Status"]');
    expect(await status.isVisible()).toBe(true);
    expect(await status.innerText()).toContain('completed');
    await page.close();
  }, 120_000);
});
