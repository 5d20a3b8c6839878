import { openSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { startShiphookChild } from '../../src/launcher/child';
import { shiphookProcessEnv } from '../../src/launcher/process-env';
import { logFile } from '../support/log-capture';
import { scrape, total } from '../support/metrics';
import { TEST_ENV } from '../support/test-config';

const REQUESTS = 24;

// `shiphook api` with several processes sharing the port: a scrape lands on one of
// them, and must still count the requests every process answered.
describe('/metrics of an api cluster', () => {
  it('sums the metrics of every api process', async () => {
    const out = openSync(logFile(inject('logDir'), `api-cluster-${process.pid}`), 'a');
    const api = startShiphookChild({
      command: 'api',
      env: {
        ...shiphookProcessEnv(),
        ...TEST_ENV,
        DATABASE_URL: inject('databaseUrl'),
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        PORT: '0', // any free port; the processes share the one the primary reports
        SHIPHOOK_API_PROCESSES: '2',
      },
      output: [out, out],
    });
    try {
      const port = (await api.ready).httpPort;
      const origin = `http://127.0.0.1:${port}`;
      for (let i = 0; i < REQUESTS; i++) {
        // A new connection each time: the primary hands connections to the processes in turn.
        const res = await fetch(`${origin}/healthz`, { headers: { connection: 'close' } });
        expect(res.status).toBe(200);
      }
      for (let i = 0; i < 4; i++) {
        const samples = await scrape(`${origin}/metrics`, { authorization: `Bearer ${TEST_ENV.SHIPHOOK_ADMIN_TOKEN}`, connection: 'close' });
        // Scrapes are counted too, once answered: the i scrapes before this one.
        expect(total(samples, 'shiphook_http_requests_total', { route: '/healthz', method: 'GET', status: '2xx' })).toBe(REQUESTS);
        expect(total(samples, 'shiphook_http_requests_total', { route: '/metrics', status: '2xx' })).toBe(i);
      }
    } finally {
      await api.stop();
    }
  });
});
