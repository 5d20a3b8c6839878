import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config';
import { ApiError } from '../../src/errors/api-error';
import { assertDeliverableAddress, basicAuthFromUrl, isPublicAddress, maskUrl, normalizeWebhookUrl } from '../../src/domain/webhook-url';

const strict = loadConfig({});
const insecure = loadConfig({ SHIPHOOK_ALLOW_INSECURE_WEBHOOKS: 'true' });

function refusal(url: string, config = strict): string {
  try {
    normalizeWebhookUrl(url, 'production', config);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return ((err as ApiError).errors[0] as { message: string }).message;
  }
  throw new Error(`${url} was accepted`);
}

describe('webhook URLs', () => {
  it('adds https:// to a URL without a scheme', () => {
    expect(normalizeWebhookUrl('example.com/hooks', 'test', strict)).toBe('https://example.com/hooks');
  });

  it('requires https and a public target unless insecure webhooks are allowed', () => {
    expect(refusal('http://example.com/x')).toBe('must use https');
    for (const url of ['https://localhost/x', 'https://127.0.0.1/x', 'https://10.0.0.5/x', 'https://192.168.1.1/x', 'https://169.254.169.254/latest', 'https://[::1]/x', 'https://[fe80::1]/x', 'https://[::ffff:127.0.0.1]/x', 'https://0.0.0.0/x']) {
      expect(refusal(url), url).toBe('must point to a public address');
    }
    expect(normalizeWebhookUrl('http://127.0.0.1:8080/x', 'production', insecure)).toBe('http://127.0.0.1:8080/x');
    expect(refusal('ftp://example.com', insecure)).toBe('must use https');
  });

  it('tells public from non-public addresses', () => {
    expect(isPublicAddress('8.8.8.8')).toBe(true);
    expect(isPublicAddress('2606:4700::1')).toBe(true);
    for (const a of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '100.64.0.1', '::1', 'fd00::1', '::ffff:7f00:1']) {
      expect(isPublicAddress(a), a).toBe(false);
    }
  });

  it('re-checks the address at delivery time', async () => {
    await expect(assertDeliverableAddress('https://127.0.0.1/x', strict)).rejects.toThrow(/non-public/);
    await expect(assertDeliverableAddress('https://localhost/x', strict)).rejects.toThrow(/non-public/);
    await expect(assertDeliverableAddress('http://127.0.0.1/x', insecure)).resolves.toBeUndefined();
  });

  it('masks credentials and turns them into Basic auth', () => {
    expect(maskUrl('https://u:p%40ss@example.com/x?y=1')).toBe('https://u:***@example.com/x?y=1');
    expect(maskUrl('https://example.com/x')).toBe('https://example.com/x');
    expect(basicAuthFromUrl('https://u:p%40ss@example.com/x')).toEqual({
      url: 'https://example.com/x',
      authorization: `Basic ${Buffer.from('u:p@ss').toString('base64')}`,
    });
    expect(basicAuthFromUrl('https://example.com/x')).toEqual({ url: 'https://example.com/x' });
  });
});
