import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../support/browser';
import { startSystem, type TestSystem } from '../support/system';

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
      blocks.map((b) => `${b.querySelector('.opblock-summary-method')?.textContent?.trim()} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`),
    );
    expect(listed.sort()).toEqual(expected.sort());
    expect(await page.textContent('.info .title')).toContain('shiphook API');
    if (process.env.SHIPHOOK_DOCS_SCREENSHOT) await page.screenshot({ path: process.env.SHIPHOOK_DOCS_SCREENSHOT, fullPage: false });
    expect(outside).toEqual([]); // no CDN: everything from the API itself
    expect(failed).toEqual([]);
    await page.close();
  });
});
