import { createHmac } from 'node:crypto';
import EasyPostClient from '@easypost/api';
import { describe, expect, it } from 'vitest';
import { deliveryBody, signature } from '../../src/engine/signature';

const verifier: any = new EasyPostClient('unused');

describe('delivery signature', () => {
  it('is hmac-sha256-hex of the exact body, keyed by the NFKD-normalised secret', () => {
    const body = '{"id":"evt_1"}';
    const composed = 's\u00e9cret'; // é as one code point
    const expected = createHmac('sha256', Buffer.from(composed.normalize('NFKD'), 'utf8')).update(body).digest('hex');
    expect(signature(body, composed)).toBe(`hmac-sha256-hex=${expected}`);
    const unnormalised = createHmac('sha256', Buffer.from(composed, 'utf8')).update(body).digest('hex');
    expect(expected).not.toBe(unnormalised);
    // The decomposed spelling of the same secret signs the same.
    expect(signature(body, 'se\u0301cret')).toBe(signature(body, composed));
  });

  it('writes integral weights as N.0 so the official client accepts the signature', () => {
    const body = deliveryBody({ id: 'evt_1', result: { weight: 15, parcel: { weight: 7.5 }, note: 'weight 3' } });
    expect(body).toContain('"weight":15.0');
    expect(body).toContain('"weight":7.5');
    const headers = { 'X-Hmac-Signature': signature(body, 'k') };
    expect(verifier.Utils.validateWebhook(Buffer.from(body), headers, 'k').result.weight).toBe(15);
    expect(() => verifier.Utils.validateWebhook(Buffer.from(body), headers, 'other')).toThrow();
  });
});
