import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventTypesFrom, selectionOf } from '../../src/portal/event-types-form';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { call, createAccount } from '../support/http';
import { startSystem, type TestSystem } from '../support/system';
import { portalLink } from './portal-pages';

/**
 * The portal's subscription fields in a real browser: "all events" or types chosen by
 * family, with when each is emitted; plain checkboxes (no script), read on the server.
 * Screenshots go to test/portal/screenshots/ (ignored by git) for a person to look at.
 */
let sys: TestSystem;
let browser: TestBrowser;
const SHOTS = path.resolve('test/portal/screenshots');

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  sys = await startSystem();
  browser = await launchBrowser();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await sys.close();
});

const shoot = async (page: Page, name: string) => {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} fits ${width} px`).toBeLessThanOrEqual(width);
    await page.screenshot({ path: path.join(SHOTS, `subscriptions-${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
};

describe('choosing event types in the portal', () => {
  it('creates a webhook for chosen types, shows what it receives, edits it back to everything, and refuses nothing chosen', async () => {
    const acct = await createAccount(sys);
    const page = await browser.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(await portalLink(sys, acct.testKey));
    const create = page.locator('form[action="/portal/webhooks"]');
    // "All events" is the default, and the families stay folded away while it is chosen.
    expect(await create.getByRole('radio', { name: /All events/ }).isChecked()).toBe(true);
    expect(await create.locator('.families').isVisible()).toBe(false);
    await create.getByRole('radio', { name: /Only the types chosen below/ }).check();
    expect(await create.locator('.families').isVisible()).toBe(true);
    // Each type with when it is emitted, grouped by family.
    const family = create.locator('fieldset.family', { has: page.locator('legend', { hasText: /^tracker$/ }) });
    expect(await family.innerText()).toContain('tracker.updated A tracker is successfully updated.');
    expect(await create.locator('fieldset.family').count()).toBe(9);

    await page.getByLabel('URL').fill('https://example.com/subscribed');
    await family.getByRole('checkbox', { name: /every tracker event/ }).check();
    await family.getByRole('checkbox', { name: /tracker\.updated/ }).check(); // taken by the family already
    await create.getByRole('checkbox', { name: /batch\.created/ }).check();
    expect(await page.locator('script, [style]').evaluateAll((all) => all.map((e) => e.outerHTML.slice(0, 200)))).toEqual([]);
    await shoot(page, 'create');
    await create.getByRole('button', { name: 'Add webhook' }).click();
    await page.waitForURL(/\/portal\/webhooks\/hook_/);
    const id = page.url().split('/').at(-1)!.split('?')[0]!;
    const hook = await call(sys, 'GET', `/webhooks/${id}`, { key: acct.testKey });
    expect(hook.body.event_types).toEqual(['batch.created', 'tracker.*']);
    expect(await page.locator('.facts').innerText()).toMatch(/Receives\s+batch\.created, tracker\.\*/);

    // The edit form shows the subscription as stored.
    const edit = page.locator(`form[action="/portal/webhooks/${id}"]`);
    expect(await edit.getByRole('radio', { name: /Only the types chosen below/ }).isChecked()).toBe(true);
    expect(await edit.getByRole('checkbox', { name: /every tracker event/ }).isChecked()).toBe(true);
    expect(await edit.getByRole('checkbox', { name: /batch\.created/ }).isChecked()).toBe(true);
    expect(await edit.getByRole('checkbox', { name: /batch\.updated/ }).isChecked()).toBe(false);
    await shoot(page, 'edit');

    // Nothing chosen: refused with why, and the webhook keeps what it had.
    await edit.getByRole('checkbox', { name: /every tracker event/ }).uncheck();
    await edit.getByRole('checkbox', { name: /batch\.created/ }).uncheck();
    await edit.getByRole('button', { name: 'Save' }).click();
    expect(await page.locator('.error').innerText()).toContain('a webhook that wants no events should be deleted or disabled');
    expect((await call(sys, 'GET', `/webhooks/${id}`, { key: acct.testKey })).body.event_types).toEqual(['batch.created', 'tracker.*']);

    // Back to everything.
    await page.locator(`form[action="/portal/webhooks/${id}"]`).getByRole('radio', { name: /All events/ }).check();
    await page.locator(`form[action="/portal/webhooks/${id}"]`).getByRole('button', { name: 'Save' }).click();
    await page.waitForURL(/notice=Saved/);
    expect((await call(sys, 'GET', `/webhooks/${id}`, { key: acct.testKey })).body.event_types).toBeNull();
    expect(await page.locator('.facts').innerText()).toMatch(/Receives\s+all event types/);

    // The list says what each webhook receives.
    await call(sys, 'POST', '/webhooks', { key: acct.testKey, body: { webhook: { url: 'https://example.com/many', event_types: ['report.*', 'claims.*', 'payment.failed', 'refund.successful'] } } });
    await page.goto(new URL('/portal/', sys.origin).toString());
    const receives = await page.locator('tbody .receives').allInnerTexts();
    expect(receives.sort()).toEqual(['receives all event types', 'receives claims.*, payment.failed, refund.successful and 1 more']);
    await shoot(page, 'list');
  }, 120_000);

  it('reads the form on the server: every type, the entries ticked (less the types their family takes), or unchanged', () => {
    expect(eventTypesFrom({})).toBeUndefined();
    expect(eventTypesFrom({ event_types_scope: 'all', event_types: ['tracker.*'] })).toBeNull();
    expect(eventTypesFrom({ event_types_scope: 'chosen', event_types: ['tracker.*', 'tracker.updated', 'batch.created', 'shipment.invoice.*', 'shipment.invoice.created'] }))
      .toEqual(['tracker.*', 'batch.created', 'shipment.invoice.*']);
    expect(eventTypesFrom({ event_types_scope: 'chosen', event_types: 'report.new' })).toEqual(['report.new']);
    expect(eventTypesFrom({ event_types_scope: 'chosen' })).toEqual([]);
    // A stored wildcard wider than a family ticks the families it takes.
    expect(selectionOf(['shipment.*', 'batch.created'])).toEqual({ all: false, patterns: ['shipment.invoice.*', 'batch.created'] });
    expect(selectionOf(['*'])).toEqual({ all: true, patterns: [] });
  });
});
