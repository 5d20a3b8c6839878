import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { startSystem, type TestSystem } from '../support/system';
import { EVENT_RESULTS } from '../../src/events/catalogue/results';
import { EVENT_TYPES } from '../../src/events/types';

let sys: TestSystem;
let chrome: TestBrowser;

beforeAll(async () => {
  sys = await startSystem();
  chrome = await launchBrowser();
});
afterAll(async () => {
  await chrome?.close();
  await sys?.close();
});

describe('/docs in a real browser', () => {
  it('renders the OpenAPI document with Swagger UI from node_modules and lists every operation', async () => {
    const doc = await (await fetch(`${sys.baseUrl}/openapi.json`)).json();
    const expected = Object.entries(doc.paths).flatMap(([p, ops]: [string, any]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    const page = await chrome.newPage();
    const outside: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(sys.origin) && !r.url().startsWith('data:')) outside.push(r.url());
    });
    const failed: string[] = [];
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(`${sys.origin}/docs`);
    await page.waitForSelector('.opblock-summary', { timeout: 30_000 });
    const listed = await page.$$eval('.opblock-summary', (blocks) =>
      blocks
        .filter((b) => !b.closest('.webhooks-container'))
        .map((b) => `${b.querySelector('.opblock-summary-method')?.textContent?.trim()} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`),
    );
    expect(listed.sort()).toEqual(expected.sort());
    expect(await page.textContent('.info .title')).toContain('shiphook API');
    if (process.env.SHIPHOOK_DOCS_SCREENSHOT) await page.screenshot({ path: process.env.SHIPHOOK_DOCS_SCREENSHOT, fullPage: false });
    expect(outside).toEqual([]); // no CDN: everything from the API itself
    expect(failed).toEqual([]);
    await page.close();
  });

  it('renders the event catalogue (the webhooks of the document), each type at its own link: /docs/#/webhooks/<operationId>', async () => {
    const doc = await (await fetch(`${sys.baseUrl}/openapi.json`)).json();
    const page = await chrome.newPage();
    await page.setViewportSize({ width: 1280, height: 900 });
    // The link a page outside /docs (the portal's type picker) gives for tracker.updated.
    await page.goto(`${sys.origin}/docs/#/webhooks/${doc.webhooks['tracker.updated'].post.operationId}`);
    await page.waitForSelector('.webhooks-container .opblock.is-open', { timeout: 30_000 });
    const listed = await page.$$eval('.webhooks-container .opblock-summary', (blocks) =>
      blocks.map((b) => `${b.querySelector('.opblock-summary-method')?.textContent?.trim()} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`),
    );
    expect(listed).toEqual(EVENT_TYPES.map((type) => `POST ${type}`));
    const open = page.locator('.webhooks-container .opblock.is-open');
    await expect.poll(() => open.locator('.opblock-summary-path').getAttribute('data-path')).toBe('tracker.updated');
    // Its headers, its example with the result of that type, and the answer a receiver owes.
    await open.locator('.microlight').first().waitFor({ timeout: 30_000 });
    const text = (await open.textContent()) ?? '';
    for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'X-Hmac-Signature', 'X-Shiphook-Event-Type', 'X-Shiphook-Attempt', 'X-Shiphook-Delivery-Id']) {
      expect(text).toContain(header);
    }
    expect(await open.locator('.microlight').first().textContent()).toContain(`"tracking_code": "${EVENT_RESULTS['tracker.updated'].example.result.tracking_code}"`);
    expect(text).toContain('2XX');
    if (process.env.SHIPHOOK_DOCS_SCREENSHOT) await open.screenshot({ path: process.env.SHIPHOOK_DOCS_SCREENSHOT.replace(/(\.png)?$/, '-webhook.png') });
    await page.close();
  });
});
