import { describe, expect, it } from 'vitest';
import { admit, type AdmissionDelivery, passTurns } from '../../activities/admission';
import type { Db } from '../../src/db/database';
import type { TargetOutcome } from '../../src/engine/contract';
import type { EventRow } from '../../src/events/tables';

/**
 * A webhook with neither a rate limit nor order per object costs what it cost before both
 * existed: admission and the turn's hand-over run no statement for it (the database below
 * throws at any use), and hand its deliveries and outcomes back as they were. (Its runs
 * issue no other Temporal command either: the replay baseline's runs to plain webhooks
 * have the same history events as before.)
 */
const noStatement = new Proxy({}, {
  get(_target, name) {
    throw new Error(`a statement for a plain webhook (db.${String(name)})`);
  },
}) as Db;

const event = { id: 'evt_1', user_id: 'user_1', mode: 'test', result: { id: 'trk_1', object: 'Tracker' } } as unknown as EventRow;
const plain = (webhookId: string, over: Partial<NonNullable<AdmissionDelivery['webhook']>> = {}): AdmissionDelivery => ({
  webhookId,
  attempts: 0,
  waitingFor: null,
  webhook: { rateLimit: null, ordering: 'none', disabledAt: null, deletedAt: null, ...over },
});

describe('admission of deliveries to webhooks with neither setting', () => {
  it('sends every one now, with no slot, and no statement', async () => {
    const deliveries = [plain('hook_a'), plain('hook_b'), { ...plain('hook_c'), webhook: undefined }];
    const { send, paused } = await admit(noStatement, event, deliveries);
    expect(send).toEqual(deliveries.map((delivery) => ({ delivery })));
    expect(paused).toEqual([]);
  });

  it('a disabled or deleted webhook’s settings are not applied: the attempt stops it, with no statement here', async () => {
    const deliveries = [plain('hook_a', { rateLimit: 5, disabledAt: new Date() }), plain('hook_b', { ordering: 'per_object', deletedAt: new Date() })];
    expect((await admit(noStatement, event, deliveries)).send).toHaveLength(2);
  });

  it('hands no turn on when its deliveries settle, with no statement', async () => {
    const deliveries = new Map(['hook_a', 'hook_b', 'hook_c'].map((id) => [id, plain(id)]));
    const outcomes: TargetOutcome[] = [
      { webhookId: 'hook_a', outcome: 'delivered' },
      { webhookId: 'hook_b', outcome: 'failed', attempt: 4, responseCode: 500 },
      { webhookId: 'hook_c', outcome: 'stopped', reason: '410 Gone: webhook disabled', gone: true },
    ];
    expect(await passTurns(noStatement, event, deliveries, outcomes)).toEqual(outcomes);
  });
});
