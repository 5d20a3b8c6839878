import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { ApiError } from '../../src/errors/api-error';
import { basicAuthFromUrl, maskUrl, normalizeWebhookUrl, redactUrl } from '../../src/webhooks/url';

const strict = loadConfig({});
const dev = loadConfig({ SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128', SHIPHOOK_WEBHOOK_ALLOW_HTTP: 'true' });

async function refusal(url: string, config = strict): Promise<string> {
  try {
    await normalizeWebhookUrl(url, 'production', config);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('WEBHOOK.INVALID');
    return ((err as ApiError).errors[0] as { message: string }).message;
  }
  throw new Error(`${url} was accepted`);
}

describe('webhook URLs', () => {
  it('adds https:// to a URL without a scheme', async () => {
    expect(await normalizeWebhookUrl('example.com/hooks', 'test', strict)).toBe('https://example.com/hooks');
  });

  it('requires https and a public target by default', async () => {
    expect(await refusal('http://example.com/x')).toBe('must use https');
    for (const url of ['https://localhost/x', 'https://127.0.0.1/x', 'https://10.0.0.5/x', 'https://192.168.1.1/x', 'https://169.254.169.254/latest', 'https://[::1]/x', 'https://[fe80::1]/x', 'https://[::ffff:127.0.0.1]/x', 'https://0.0.0.0/x']) {
      expect(await refusal(url), url).toBe('must point to a public address');
    }
    expect(await refusal('ftp://example.com', dev)).toBe('must use https');
  });

  it('resolves a host name at creation: one that resolves to a non-public address is refused', async () => {
    const zone: Record<string, string[]> = { 'internal.example.com': ['10.0.0.7'], 'mixed.example.com': ['93.184.216.34', '169.254.169.254'], 'hooks.example.com': ['93.184.216.34'], 'loop.example.com': ['127.0.0.1'] };
    const lookup = async (host: string) => zone[host] ?? [];
    const create = (url: string, config = strict) => normalizeWebhookUrl(url, 'production', config, lookup);
    await expect(create('https://internal.example.com/x')).rejects.toThrow(ApiError);
    await expect(create('https://mixed.example.com/x')).rejects.toThrow(ApiError);
    await expect(create('https://loop.example.com/x')).rejects.toThrow(ApiError);
    expect(await create('https://loop.example.com/x', dev)).toBe('https://loop.example.com/x');
    await expect(create('https://internal.example.com/x', dev)).rejects.toThrow(ApiError);
    expect(await create('https://hooks.example.com/x')).toBe('https://hooks.example.com/x');
    // A name that does not resolve (yet) is accepted: every delivery resolves it again.
    expect(await create('https://not-yet.example.com/x')).toBe('https://not-yet.example.com/x');
  });

  it('lets the allowed networks through, and nothing else that is not public', async () => {
    expect(await normalizeWebhookUrl('http://127.0.0.1:8080/x', 'production', dev)).toBe('http://127.0.0.1:8080/x');
    expect(await normalizeWebhookUrl('http://[::1]:8080/x', 'production', dev)).toBe('http://[::1]:8080/x');
    expect(await normalizeWebhookUrl('http://localhost:8080/x', 'production', dev)).toBe('http://localhost:8080/x');
    for (const url of ['http://10.0.0.5/x', 'http://169.254.169.254/x', 'http://[::7f00:1]/x', 'http://[2002:7f00:1::]/x', 'http://[fec0::1]/x', 'http://192.88.99.1/x', 'http://[64:ff9b:1::a00:1]/x']) {
      expect(await refusal(url, dev), url).toBe('must point to a public address');
    }
  });

  it('http is refused unless SHIPHOOK_WEBHOOK_ALLOW_HTTP, even to an allowed network', async () => {
    const httpsOnly = loadConfig({ SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' });
    expect(await refusal('http://127.0.0.1:8080/x', httpsOnly)).toBe('must use https');
    expect(await normalizeWebhookUrl('https://127.0.0.1:8443/x', 'production', httpsOnly)).toBe('https://127.0.0.1:8443/x');
  });

  it('masks the whole user-info part for the owner, and the query string too for anyone else', () => {
    expect(maskUrl('https://u:p%40ss@example.com/x?y=1')).toBe('https://***@example.com/x?y=1');
    expect(maskUrl('https://TOKEN@example.com/x')).toBe('https://***@example.com/x');
    expect(maskUrl('https://example.com/x?token=abc')).toBe('https://example.com/x?token=abc');
    expect(redactUrl('https://TOKEN@example.com/x?token=abc#frag')).toBe('https://***@example.com/x?***');
    expect(redactUrl('https://example.com/x')).toBe('https://example.com/x');
  });

  it('turns URL credentials into Basic auth', () => {
    expect(basicAuthFromUrl('https://u:p%40ss@example.com/x')).toEqual({
      url: 'https://example.com/x',
      authorization: `Basic ${Buffer.from('u:p@ss').toString('base64')}`,
    });
    expect(basicAuthFromUrl('https://example.com/x')).toEqual({ url: 'https://example.com/x' });
  });
});
