import { describe, expect, it } from 'vitest';
import { duration, loadConfig } from '../src/config';

describe('config', () => {
  it('reads durations with units', () => {
    expect(duration('250ms')).toBe(250);
    expect(duration('5s')).toBe(5000);
    expect(duration('30m')).toBe(1_800_000);
    expect(duration('2h')).toBe(7_200_000);
    expect(duration('5d')).toBe(432_000_000);
    expect(() => duration('soon')).toThrow(/is "soon"; it takes a duration \(e\.g\. 500ms/);
  });

  it('has safe production defaults', () => {
    const c = loadConfig({});
    expect(c.webhooks.allowedNetworks).toEqual([]);
    expect(c.webhooks.allowHttp).toBe(false);
    expect(c.rateLimit.perSecond).toBe(100);
    expect(c.adminToken).toBeUndefined();
    expect(c.retryDelaysMs).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(c.attemptTimeoutMs).toBe(15_000);
    expect(c.port).toBe(3000);
  });

  it('refuses a workflow cache no larger than the workflow task slots', () => {
    expect(() => loadConfig({ SHIPHOOK_WORKER_CACHED_WORKFLOWS: '100', SHIPHOOK_WORKER_TASK_SLOTS: '200' })).toThrow('SHIPHOOK_WORKER_CACHED_WORKFLOWS is "100"; it takes more than SHIPHOOK_WORKER_TASK_SLOTS (200)');
    expect(() => loadConfig({ SHIPHOOK_WORKER_TASK_SLOTS: '700' })).toThrow('SHIPHOOK_WORKER_CACHED_WORKFLOWS is 600 (its default); it takes more than SHIPHOOK_WORKER_TASK_SLOTS (700)');
    expect(loadConfig({ SHIPHOOK_WORKER_CACHED_WORKFLOWS: '300', SHIPHOOK_WORKER_TASK_SLOTS: '200' }).worker.cachedWorkflows).toBe(300);
  });

  it('refuses no workflow cache at all, and fewer than two task slots, and says why', () => {
    expect(() => loadConfig({ SHIPHOOK_WORKER_CACHED_WORKFLOWS: '0' })).toThrow(/CACHED_WORKFLOWS is "0"; it takes more than SHIPHOOK_WORKER_TASK_SLOTS: 0 would make the worker run one workflow at a time/);
    expect(() => loadConfig({ SHIPHOOK_WORKER_TASK_SLOTS: '0' })).toThrow(/TASK_SLOTS is "0"; it takes at least 20/);
    expect(() => loadConfig({ SHIPHOOK_WORKER_TASK_SLOTS: '19', SHIPHOOK_WORKER_CACHED_WORKFLOWS: '30' })).toThrow(/TASK_SLOTS is "19"; it takes at least 20 \(the Temporal SDK's pollers reserve some/);
    expect(loadConfig({ SHIPHOOK_WORKER_TASK_SLOTS: '20', SHIPHOOK_WORKER_CACHED_WORKFLOWS: '30' }).worker.workflowTaskSlots).toBe(20);
  });

  it('keeps events 30 days and runs retention hourly by default, and refuses what cannot work', () => {
    const c = loadConfig({});
    expect(c.eventRetentionMs).toBe(30 * 86_400_000);
    expect(c.retentionEveryMs).toBe(3_600_000);
    expect(loadConfig({ SHIPHOOK_EVENT_RETENTION: '7d', SHIPHOOK_RETENTION_EVERY: '15m' })).toMatchObject({ eventRetentionMs: 7 * 86_400_000, retentionEveryMs: 900_000 });
    expect(() => loadConfig({ SHIPHOOK_EVENT_RETENTION: 'a month' })).toThrow('SHIPHOOK_EVENT_RETENTION is "a month"; it takes a duration (e.g. 500ms, 5s, 30m, 2h, 1d)');
    expect(() => loadConfig({ SHIPHOOK_EVENT_RETENTION: '10s' })).toThrow('SHIPHOOK_EVENT_RETENTION is "10s"; it takes a duration of at least 1m');
    expect(() => loadConfig({ SHIPHOOK_RETENTION_EVERY: '0' })).toThrow('SHIPHOOK_RETENTION_EVERY is "0"; it takes a duration of at least 1m');
  });

  it('refuses a malformed number', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow('PORT is "eighty"; it takes a whole number, 0 or more');
    expect(() => loadConfig({ SHIPHOOK_RETRY_DELAYS: '5s,often' })).toThrow('SHIPHOOK_RETRY_DELAYS is "5s,often"; it takes durations separated by commas');
    expect(() => loadConfig({ SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS: 'intranet' })).toThrow('SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS is "intranet"; it takes CIDR ranges');
    expect(() => loadConfig({ SHIPHOOK_WEBHOOK_CA_FILE: '/no/such/ca.pem' })).toThrow('SHIPHOOK_WEBHOOK_CA_FILE is "/no/such/ca.pem"; it takes a PEM file shiphook can read (ENOENT)');
  });

  it('refuses an admin token shorter than 32 characters', () => {
    expect(() => loadConfig({ SHIPHOOK_ADMIN_TOKEN: 'x'.repeat(31) })).toThrow('SHIPHOOK_ADMIN_TOKEN is 31 characters long; it takes at least 32 characters');
    expect(() => loadConfig({ SHIPHOOK_ADMIN_TOKEN: 'x'.repeat(31) })).not.toThrow('xxx'); // never the secret itself
    expect(loadConfig({ SHIPHOOK_ADMIN_TOKEN: 'x'.repeat(32) }).adminToken).toBe('x'.repeat(32));
  });

  it('refuses the old single switch instead of ignoring it', () => {
    expect(() => loadConfig({ SHIPHOOK_ALLOW_INSECURE_WEBHOOKS: 'true' })).toThrow(/SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS/);
    expect(() => loadConfig({ SHIPHOOK_WEBHOOK_ALLOW_HTTP: 'yes' })).toThrow('SHIPHOOK_WEBHOOK_ALLOW_HTTP is "yes"; it takes true or false');
  });
});
