import { describe, expect, it } from 'vitest';
import { duration, loadConfig } from '../src/config';

describe('config', () => {
  it('reads durations with units', () => {
    expect(duration('250ms')).toBe(250);
    expect(duration('5s')).toBe(5000);
    expect(duration('30m')).toBe(1_800_000);
    expect(duration('2h')).toBe(7_200_000);
    expect(duration('5d')).toBe(432_000_000);
    expect(() => duration('soon')).toThrow(/cannot read/);
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
    expect(() => loadConfig({ SHIPHOOK_WORKER_CACHED_WORKFLOWS: '100', SHIPHOOK_WORKER_TASK_SLOTS: '200' })).toThrow(/CACHED_WORKFLOWS/);
    expect(loadConfig({ SHIPHOOK_WORKER_CACHED_WORKFLOWS: '300', SHIPHOOK_WORKER_TASK_SLOTS: '200' }).worker.cachedWorkflows).toBe(300);
  });

  it('refuses no workflow cache at all, and fewer than two task slots, and says why', () => {
    expect(() => loadConfig({ SHIPHOOK_WORKER_CACHED_WORKFLOWS: '0' })).toThrow(/CACHED_WORKFLOWS=0 would make the worker run one workflow at a time/);
    expect(() => loadConfig({ SHIPHOOK_WORKER_TASK_SLOTS: '0' })).toThrow(/TASK_SLOTS must be at least 2/);
    expect(() => loadConfig({ SHIPHOOK_WORKER_TASK_SLOTS: '1' })).toThrow(/TASK_SLOTS must be at least 2/);
  });

  it('keeps events 30 days and runs retention hourly by default, and refuses what cannot work', () => {
    const c = loadConfig({});
    expect(c.eventRetentionMs).toBe(30 * 86_400_000);
    expect(c.retentionEveryMs).toBe(3_600_000);
    expect(loadConfig({ SHIPHOOK_EVENT_RETENTION: '7d', SHIPHOOK_RETENTION_EVERY: '15m' })).toMatchObject({ eventRetentionMs: 7 * 86_400_000, retentionEveryMs: 900_000 });
    expect(() => loadConfig({ SHIPHOOK_EVENT_RETENTION: 'a month' })).toThrow(/SHIPHOOK_EVENT_RETENTION: cannot read/);
    expect(() => loadConfig({ SHIPHOOK_EVENT_RETENTION: '10s' })).toThrow(/SHIPHOOK_EVENT_RETENTION must be at least 1m/);
    expect(() => loadConfig({ SHIPHOOK_RETENTION_EVERY: '0' })).toThrow(/SHIPHOOK_RETENTION_EVERY must be at least 1m/);
  });

  it('refuses a malformed number', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ SHIPHOOK_RETRY_DELAYS: '5s,often' })).toThrow(/SHIPHOOK_RETRY_DELAYS/);
  });

  it('refuses an admin token shorter than 32 characters', () => {
    expect(() => loadConfig({ SHIPHOOK_ADMIN_TOKEN: 'x'.repeat(31) })).toThrow(/at least 32/);
    expect(loadConfig({ SHIPHOOK_ADMIN_TOKEN: 'x'.repeat(32) }).adminToken).toBe('x'.repeat(32));
  });

  it('refuses the old single switch instead of ignoring it', () => {
    expect(() => loadConfig({ SHIPHOOK_ALLOW_INSECURE_WEBHOOKS: 'true' })).toThrow(/SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS/);
    expect(() => loadConfig({ SHIPHOOK_WEBHOOK_ALLOW_HTTP: 'yes' })).toThrow(/true or false/);
  });
});
