import { describe, expect, it } from 'vitest';
import { devWebhookEnv } from '../../src/cli/dev-webhooks';

describe('shiphook dev webhook settings', () => {
  it('allow exactly loopback and http while the API listens on loopback', () => {
    for (const host of ['127.0.0.1', 'localhost', '::1']) {
      expect(devWebhookEnv(host, {})).toEqual({ SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', SHIPHOOK_WEBHOOK_ALLOW_HTTP: 'true' });
    }
  });

  it('keep production rules when the API is reachable from other machines, and refuse loopback then', () => {
    expect(devWebhookEnv('0.0.0.0', {})).toEqual({ SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS: '', SHIPHOOK_WEBHOOK_ALLOW_HTTP: 'false' });
    expect(() => devWebhookEnv('0.0.0.0', { SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' })).toThrow(/loopback/);
    expect(() => devWebhookEnv('192.168.1.20', { SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS: '::1/128' })).toThrow(/loopback/);
    expect(devWebhookEnv('0.0.0.0', { SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS: '10.20.0.0/16' }).SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS).toBe('10.20.0.0/16');
  });
});
