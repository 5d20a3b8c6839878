import { describe, expect, it } from 'vitest';
import { BULK_REPLAY_INPUT, BulkReplayBody } from '../../src/engine/replay.schema';
import { ApiError } from '../../src/errors/api-error';
import { parseInput } from '../../src/schema';

/** The error body a broad replay's filter gets, or the filter. */
function parsed(body: unknown) {
  try {
    return parseInput(BulkReplayBody, body, BULK_REPLAY_INPUT);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { status: err.status, code: err.code, errors: err.errors };
  }
}

describe('the broad replay filter, validated by its schema alone', () => {
  it('takes any combination of filters, dates as the instant they name', () => {
    const user = 'user_0192f3a4b5c67d8e9f0a1b2c3d4e5f60';
    expect(parsed({ status: 'failed', user_id: user, since: '2026-01-01' })).toEqual({ status: 'failed', user_id: user, since: '2026-01-01T00:00:00.000Z' });
    expect(parsed({ dispatch_failed: true })).toEqual({ dispatch_failed: true });
  });

  it('wants at least one filter', () => {
    expect(parsed({})).toEqual({ status: 422, code: 'PARAMETER.REQUIRED', errors: [{ field: 'status', message: expect.stringMatching(/^give at least one filter/) }] });
    expect(parsed([])).toMatchObject({ status: 422, code: 'PARAMETER.REQUIRED' });
  });

  it('names each bad field', () => {
    expect(parsed({ user_id: 'usr_1', webhook_id: 'hook_x' })).toEqual({
      status: 422,
      code: 'PARAMETER.REQUIRED',
      errors: [{ field: 'user_id', message: 'must be a user id' }, { field: 'webhook_id', message: 'must be a webhook id' }],
    });
    expect(parsed({ status: 'lost' })).toMatchObject({ code: 'PARAMETER.REQUIRED', errors: [{ field: 'status' }] });
    expect(parsed({ dispatch_failed: false })).toEqual({ status: 422, code: 'PARAMETER.REQUIRED', errors: [{ field: 'dispatch_failed', message: 'must be true (or left out)' }] });
  });

  it('a date that is not one is DATE.PARSE.FAILURE', () => {
    expect(parsed({ since: 'yesterday' })).toEqual({ status: 422, code: 'DATE.PARSE.FAILURE', errors: [{ field: 'since', message: 'must be an ISO 8601 datetime' }] });
    expect(parsed({ status: 'failed', until: '2026-13-45' })).toMatchObject({ code: 'DATE.PARSE.FAILURE', errors: [{ field: 'until' }] });
  });
});
