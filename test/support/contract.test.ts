import { describe, expect, it } from 'vitest';
import { checkResponse } from './contract';

const webhook = {
  id: 'hook_0192f3a4b5c67d8e9f0a1b2c3d4e5f60', object: 'Webhook', mode: 'test', url: 'https://example.com/h',
  created_at: '2026-01-31T12:00:00Z', disabled_at: null, custom_headers: [], event_types: null,
  rate_limit: null, ordering: 'none',
};

describe('the contract check of the test helpers', () => {
  it('accepts a response as the document describes it', () => {
    expect(() => checkResponse('GET', '/v2/webhooks/hook_x', 200, webhook)).not.toThrow();
    expect(() => checkResponse('DELETE', '/v2/users/user_x', 204, undefined)).not.toThrow();
    expect(() => checkResponse('GET', '/v2/nothing', 404, { error: { code: 'NOT_FOUND', message: 'x', errors: ['y'] } })).not.toThrow();
  });

  it('fails a field the document does not declare, a missing field, a wrong type, an unlisted status or an undocumented operation', () => {
    expect(() => checkResponse('GET', '/v2/webhooks/hook_x', 200, { ...webhook, webhook_secret: 's' })).toThrow(/webhook_secret/);
    const { url: _url, ...noUrl } = webhook;
    expect(() => checkResponse('GET', '/v2/webhooks/hook_x', 200, noUrl)).toThrow(/url/);
    expect(() => checkResponse('GET', '/v2/webhooks/hook_x', 200, { ...webhook, disabled_at: 5 })).toThrow(/disabled_at/);
    expect(() => checkResponse('GET', '/v2/openapi.json', 404, {})).toThrow(/does not list/);
    expect(() => checkResponse('GET', '/v2/nothing', 200, {})).toThrow(/not an operation/);
    expect(() => checkResponse('GET', '/v2/webhooks', 500, { error: { code: 'X', message: null, errors: [] } })).toThrow(/message/);
  });
});
