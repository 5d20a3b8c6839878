import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { type Account, call, createAccount } from '../support/http';
import { startSystem, type TestSystem } from '../support/system';
import { TEST_ENV } from '../support/test-config';
import { portalLink } from './portal-pages';

/**
 * The events page's search box (one box: an object id or a tracking code, told apart by
 * shape), with the status and type filters and the pages, in a real browser, as a support
 * desk asks "what did we send for this tracker?". Screenshots at 1280 and 390 px go to
 * test/portal/screenshots/.
 */
let sys: TestSystem;
let browser: TestBrowser;
let acct: Account;
const SHOTS = path.resolve('test/portal/screenshots');
const ADMIN = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };

const tracker = `trk_${randomBytes(16).toString('hex')}`;
const CODE = 'EZ4000000004';
/** The account's events, oldest first: 27 about the tracker (every third failed), then 3 about other objects. */
const published: { id: string; object: string; status: string }[] = [];

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  sys = await startSystem();
  browser = await launchBrowser();
  acct = await createAccount(sys);
  const about = (id: string, code?: string) => ({ object: 'Tracker', id, ...(code ? { tracking_code: code } : {}), status: 'in_transit' });
  const events = [
    ...Array.from({ length: 27 }, () => ({ description: 'tracker.updated', result: about(tracker, CODE) })),
    { description: 'tracker.updated', result: about(`trk_${randomBytes(16).toString('hex')}`, 'EZ1000000001') },
    { description: 'batch.created', result: { object: 'Batch', id: `batch_${randomBytes(16).toString('hex')}` } },
    { description: 'tracker.created', result: about(`trk_${randomBytes(16).toString('hex')}`) },
  ].map((e) => ({ user_id: acct.user.id, mode: 'test', ...e }));
  const res = await call(sys, 'POST', '/admin/v1/events/batch', { headers: ADMIN, body: { events } });
  expect(res.status).toBe(201);
  // No webhook: each is completed at once; every third about the tracker is made failed.
  const ids: string[] = res.body.events.map((e: { id: string }) => e.id);
  for (const [i, id] of ids.entries()) {
    const status = i < 27 && i % 3 === 0 ? 'failed' : 'completed';
    if (status === 'failed') await sys.db.updateTable('events').set({ status }).where('id', '=', id).execute();
    published.push({ id, object: events[i]!.result.id, status });
  }
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await sys?.close();
});

const newestFirst = (pick: (e: (typeof published)[number]) => boolean) => published.filter(pick).map((e) => e.id).reverse();
const listed = (page: Page) => page.locator('tbody th a').allInnerTexts();

describe('the events page’s search box', () => {
  it('finds the events about a tracking code (any case) or an object id, with the status filter and across pages', async () => {
    const page = await browser.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(await portalLink(sys, acct.testKey));
    await page.goto(new URL('/portal/events', sys.origin).toString());
    const aboutTracker = newestFirst((e) => e.object === tracker);

    // A tracking code, typed in lower case with spaces around it: the first page of 25.
    await page.getByLabel('Object id or tracking code').fill(`  ${CODE.toLowerCase()} `);
    await page.getByRole('button', { name: 'Filter' }).click();
    expect(new URL(page.url()).searchParams.get('object')).toBe(`  ${CODE.toLowerCase()} `);
    expect(await listed(page)).toEqual(aboutTracker.slice(0, 25));
    expect(await page.getByLabel('Object id or tracking code').inputValue()).toBe(CODE.toLowerCase());
    // The next page keeps the search.
    await page.getByRole('link', { name: 'Older events →' }).click();
    expect(await listed(page)).toEqual(aboutTracker.slice(25));

    // The object id with a status: only its failed events.
    await page.goto(new URL('/portal/events', sys.origin).toString());
    await page.getByLabel('Object id or tracking code').fill(tracker);
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    expect(await listed(page)).toEqual(newestFirst((e) => e.object === tracker && e.status === 'failed'));
    expect(await listed(page)).toHaveLength(9);
    await page.screenshot({ path: path.join(SHOTS, 'events-search-1280.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: path.join(SHOTS, 'events-search-390.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });

    // With a type it has no event of: nothing matches.
    await page.getByLabel('Type').selectOption('batch.created');
    await page.getByRole('button', { name: 'Filter' }).click();
    expect(await listed(page)).toEqual([]);
    expect(await page.locator('main').innerText()).toContain('No events match.');
    await page.close();
  });

  it('refuses what no object id or tracking code looks like, with the reason, and opens an event by its id', async () => {
    const page = await browser.newPage();
    await page.goto(await portalLink(sys, acct.testKey));
    await page.goto(new URL('/portal/events', sys.origin).toString());
    await page.getByLabel('Object id or tracking code').fill('EZ 4000 0000 04');
    // The answer to the form's own request (a reload raced the navigation on a busy machine).
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().isNavigationRequest() && new URL(r.url()).searchParams.has('object')),
      page.getByRole('button', { name: 'Filter' }).click(),
    ]);
    await page.waitForLoadState();
    expect(answer.status()).toBe(422);
    const alert = await page.getByRole('alert').innerText();
    expect(alert).toContain('Search for an object id');
    expect(alert).toContain('tracking_code must be 1 to 64 letters, digits, underscores or hyphens');
    expect(await listed(page)).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(SHOTS, 'events-search-refused-390.png'), fullPage: true });

    // An event's id: that event's page.
    const event = published.at(-1)!.id;
    await page.getByLabel('Object id or tracking code').fill(event);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(new RegExp(`/portal/events/${event}$`));
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toContain('tracker.created');
    await page.close();
  });
});
