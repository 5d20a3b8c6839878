import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createAccount, type Account } from '../support/http';
import { scrape, total } from '../support/metrics';
import { startSystem, type TestSystem } from '../support/system';
import { TEST_ENV } from '../support/test-config';

const ADMIN = { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}` };
const COUNTER = 'shiphook_http_requests_total';

let sys: TestSystem;
let acct: Account;

beforeAll(async () => {
  sys = await startSystem();
  acct = await createAccount(sys);
});
afterAll(async () => {
  await sys.close();
});

describe('/metrics route labels', () => {
  it('are the templates of the paths a client calls, for answers and refusals alike', async () => {
    const before = await scrape(`${sys.origin}/metrics`, ADMIN);
    const count = (samples: typeof before, route: string, method: string, status: string) => total(samples, COUNTER, { route, method, status });

    await fetch(`${sys.origin}/v2/openapi.json`);
    await fetch(`${sys.origin}/v2/openapi.json`, { method: 'DELETE' });
    await fetch(`${sys.origin}/docs/index.html`);
    await fetch(`${sys.origin}/portal/login/not-a-token`);
    await call(sys, 'GET', '/webhooks', { key: acct.testKey });
    await call(sys, 'GET', '/webhooks/hook_0123456789abcdef', { key: acct.testKey }); // 404 thrown inside the route
    await call(sys, 'PATCH', '/events/evt_0123456789abcdef', { key: acct.testKey }); // 405
    await call(sys, 'GET', '/admin/v1/replays/replay_0123456789abcdef', { headers: ADMIN });
    await call(sys, 'GET', '/no/such/route', { key: acct.testKey });

    const after = await scrape(`${sys.origin}/metrics`, ADMIN);
    const expected: [string, string, string][] = [
      ['/v2/openapi.json', 'GET', '2xx'],
      ['/v2/openapi.json', 'DELETE', '4xx'],
      ['/docs/*', 'GET', '2xx'],
      ['/portal/login/:token', 'GET', '4xx'],
      ['/v2/webhooks', 'GET', '2xx'],
      ['/v2/webhooks/:id', 'GET', '4xx'],
      ['/v2/events/:id', 'PATCH', '4xx'],
      ['/admin/v1/replays/:id', 'GET', '4xx'],
      ['unmatched', 'GET', '4xx'],
    ];
    for (const [route, method, status] of expected) expect(count(after, route, method, status) - count(before, route, method, status), `${method} ${route} ${status}`).toBe(1);

    const routes = new Set(after.filter((s) => s.name === COUNTER).map((s) => s.labels.route!));
    for (const route of routes) {
      expect(route).toMatch(/^(unmatched|\/(metrics|healthz|readyz)$|\/(v2|admin\/v1|portal|docs)(\/|$))/);
      expect(route).not.toMatch(/\/v2\/v2|hook_|evt_|replay_|not-a-token|no\/such/);
    }
  });
});
