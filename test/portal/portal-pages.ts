import { expect } from 'vitest';
import type { Page } from 'playwright-core';
import { call } from '../support/http';
import { eventually } from '../support/receiver';
import type { TestSystem } from '../support/system';

/** What the portal's browser tests share: a portal link as a client asks for one, and waiting for a page to show something. */

export async function portalLink(sys: TestSystem, key: string): Promise<string> {
  const res = await call(sys, 'POST', '/portal_sessions', { key });
  expect(res.status).toBe(201);
  expect(res.body).toMatchObject({ object: 'PortalSession', url: expect.stringContaining('/portal/login/'), expires_at: expect.any(String) });
  return res.body.url;
}

/** Reloads until the page shows `text` (the engine works in the background). */
export async function untilShown(page: Page, text: string | RegExp, what: string) {
  await eventually(async () => {
    await page.reload();
    const body = await page.locator('main').innerText();
    return (typeof text === 'string' ? body.includes(text) : text.test(body)) ? true : undefined;
  }, 30_000, what);
}
