import { createHmac } from 'node:crypto';
import EasyPostClient from '@easypost/api';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { deliveryBody, hmacSignature, signedRequest, type SigningWebhook } from '../../src/engine/signed-request';
import { VERSION } from '../../src/version';

const easypost: any = new EasyPostClient('unused');
const sentAt = new Date('2026-11-26T12:00:00.500Z');
const body = deliveryBody({ id: 'evt_1', object: 'Event', result: { object: 'Tracker', weight: 15 } });
const event = { id: 'evt_1', type: 'tracker.updated', body, test: false };
const attempt = { sentAt, number: 1, payloadId: 'payload_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' };
const hook = (over: Partial<SigningWebhook> = {}): SigningWebhook => ({ url: 'https://receiver.example/hook', customHeaders: [], secret: null, previousSecret: null, ...over });
/** A Standard Webhooks verifier for a secret that is not `whsec_…`: the key is its NFKD UTF-8 bytes. */
const standard = (secret: string) => new Webhook(`whsec_${Buffer.from(secret.normalize('NFKD'), 'utf8').toString('base64')}`);
/** Standard Webhooks verifies the timestamp against now: verify as of the attempt. */
const verifyAt = <T>(fn: () => T): T => {
  const now = Date.now;
  Date.now = () => sentAt.getTime();
  try {
    return fn();
  } finally {
    Date.now = now;
  }
};

describe('the signed request of an attempt', () => {
  it('without a secret: the body as given, the service’s headers, Standard Webhooks id and timestamp, no signature', () => {
    const req = signedRequest(event, hook(), attempt);
    expect(req.url).toBe('https://receiver.example/hook');
    expect(req.body).toBe(body);
    expect(req.headers).toEqual({
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'User-Agent': `shiphook/${VERSION}`,
      'webhook-id': 'evt_1',
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'X-Shiphook-Event-Type': 'tracker.updated',
      'X-Shiphook-Attempt': '1',
      'X-Shiphook-Delivery-Id': attempt.payloadId,
    });
    expect(req.logged).toEqual({ url: req.url, headers: req.headers });
  });

  it('keeps custom headers except the names the service sets, whose values win whatever their case', () => {
    const customHeaders = [
      { name: 'X-Tenant', value: 'acme' },
      { name: 'content-type', value: 'text/plain' },
      { name: 'X-HMAC-Signature', value: 'forged' },
      { name: 'Authorization', value: 'Bearer custom' },
      { name: 'Webhook-Id', value: 'other' },
    ];
    const req = signedRequest(event, hook({ customHeaders }), attempt);
    expect(req.headers['X-Tenant']).toBe('acme');
    expect(req.headers['Content-Type']).toBe('application/json');
    expect(req.headers['webhook-id']).toBe('evt_1');
    for (const name of ['content-type', 'X-HMAC-Signature', 'Authorization', 'Webhook-Id']) expect(req.headers).not.toHaveProperty(name);
  });

  it('with a secret: X-Hmac-Signature and webhook-signature, which the official client and a Standard Webhooks library verify', () => {
    const req = signedRequest(event, hook({ secret: 's3cret' }), attempt);
    expect(req.headers['X-Hmac-Signature']).toBe(hmacSignature(body, 's3cret'));
    expect(easypost.Utils.validateWebhook(Buffer.from(req.body), req.headers, 's3cret').result.weight).toBe(15);
    expect(req.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(verifyAt(() => standard('s3cret').verify(req.body, req.headers))).toMatchObject({ id: 'evt_1' });
    expect(() => verifyAt(() => standard('other').verify(req.body, req.headers))).toThrow();
  });

  it('during a rotation: webhook-signature by the new and the previous secret, X-Hmac-Signature by the new one only', () => {
    const req = signedRequest(event, hook({ secret: 'new-secret', previousSecret: 'old-secret' }), attempt);
    expect(req.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secret of ['new-secret', 'old-secret']) expect(verifyAt(() => standard(secret).verify(req.body, req.headers))).toMatchObject({ id: 'evt_1' });
    expect(req.headers['X-Hmac-Signature']).toBe(hmacSignature(body, 'new-secret'));
  });

  it('a whsec_ secret is its decoded bytes for Standard Webhooks, as a library takes it', () => {
    const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
    const req = signedRequest(event, hook({ secret }), attempt);
    expect(verifyAt(() => new Webhook(secret).verify(req.body, req.headers))).toMatchObject({ id: 'evt_1' });
  });

  it('URL credentials become Basic auth, sent without them in the URL, and masked in what the log keeps', () => {
    const req = signedRequest(event, hook({ url: 'https://us%40r:p%3Ass@receiver.example/hook?x=1' }), attempt);
    expect(req.url).toBe('https://receiver.example/hook?x=1');
    expect(req.headers.Authorization).toBe(`Basic ${Buffer.from('us@r:p:ss').toString('base64')}`);
    expect(req.logged.headers.Authorization).toBe('Basic ***');
    expect(req.logged.url).not.toContain('p%3Ass');
    expect(req.logged.url).toContain('receiver.example/hook');
  });

  it('tells the receiver the event type, the attempt number and the Payload id it will be recorded as; custom headers cannot forge them', () => {
    const customHeaders = [{ name: 'x-shiphook-attempt', value: '99' }, { name: 'X-SHIPHOOK-TEST', value: 'true' }];
    const req = signedRequest({ ...event, type: 'batch.created' }, hook({ customHeaders, secret: 's3cret' }), { sentAt, number: 3, payloadId: 'payload_0192f3a4b5c67d8e9f0a1b2c3d4e5f61' });
    expect(req.headers['X-Shiphook-Event-Type']).toBe('batch.created');
    expect(req.headers['X-Shiphook-Attempt']).toBe('3');
    expect(req.headers['X-Shiphook-Delivery-Id']).toBe('payload_0192f3a4b5c67d8e9f0a1b2c3d4e5f61');
    // Names stored before the brand prefix was refused, in another case, are not sent beside the service's.
    expect(Object.keys(req.headers).filter((name) => name.toLowerCase().startsWith('x-shiphook-')).sort()).toEqual(['X-Shiphook-Attempt', 'X-Shiphook-Delivery-Id', 'X-Shiphook-Event-Type']);
    // Dedupe stays by the event id, the same on every attempt; the signatures still verify.
    expect(req.headers['webhook-id']).toBe('evt_1');
    expect(easypost.Utils.validateWebhook(Buffer.from(req.body), req.headers, 's3cret').id).toBe('evt_1');
    expect(req.logged.headers).toEqual(req.headers);
  });

  it('marks test events for receivers', () => {
    expect(signedRequest({ ...event, test: true }, hook(), attempt).headers['X-Shiphook-Test']).toBe('true');
    expect(signedRequest(event, hook(), attempt).headers).not.toHaveProperty('X-Shiphook-Test');
  });
});

describe('the delivery body and X-Hmac-Signature', () => {
  it('is hmac-sha256-hex of the exact body, keyed by the NFKD-normalised secret', () => {
    const plain = '{"id":"evt_1"}';
    const composed = 's\u00e9cret'; // é as one code point
    const expected = createHmac('sha256', Buffer.from(composed.normalize('NFKD'), 'utf8')).update(plain).digest('hex');
    expect(hmacSignature(plain, composed)).toBe(`hmac-sha256-hex=${expected}`);
    const unnormalised = createHmac('sha256', Buffer.from(composed, 'utf8')).update(plain).digest('hex');
    expect(expected).not.toBe(unnormalised);
    // The decomposed spelling of the same secret signs the same.
    expect(hmacSignature(plain, 'se\u0301cret')).toBe(hmacSignature(plain, composed));
  });

  it('writes integral weights as N.0 so the official client accepts the signature', () => {
    const written = deliveryBody({ id: 'evt_1', result: { weight: 15, parcel: { weight: 7.5 }, note: 'weight 3' } });
    expect(written).toContain('"weight":15.0');
    expect(written).toContain('"weight":7.5');
    const headers = { 'X-Hmac-Signature': hmacSignature(written, 'k') };
    expect(easypost.Utils.validateWebhook(Buffer.from(written), headers, 'k').result.weight).toBe(15);
    expect(() => easypost.Utils.validateWebhook(Buffer.from(written), headers, 'other')).toThrow();
  });
});
