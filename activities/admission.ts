import type { Db } from '../src/db/database';
import type { DeliveryPause, TargetOutcome } from '../src/engine/contract';
import { claimTurn, type OrderedDelivery, orderedObjectOf, passTurn } from '../src/engine/ordering';
import { clearWaiting, markHeld, reserveSlot, slotLeadMs, slotToleranceMs, takeSendTime } from '../src/engine/webhook-rate-limit';
import type { EventRow } from '../src/events/tables';
import { errorText } from '../src/errors/error-text';
import { log } from '../src/log';
import type { DeliveryOrdering } from '../src/webhooks/tables';

/**
 * Which deliveries of an attempt may be sent now. A webhook that orders per object holds a
 * delivery back while an earlier event about the same object goes first
 * (src/engine/ordering.ts); a webhook with a rate limit gives it a sending slot, waited for
 * here when it is near and handed back to the run when it is not
 * (src/engine/webhook-rate-limit.ts). Either way a delivery held back is not an attempt: it
 * is not recorded and does not count against the webhook's health. A webhook with neither
 * setting costs nothing here: no statement, no wait.
 */

/** What admission reads of a delivery (activities/deliver.ts loads it with the attempt). */
export interface AdmissionDelivery {
  webhookId: string;
  attempts: number;
  /** Why it was not sent before (`event_deliveries.waiting_for`). */
  waitingFor: string | null;
  webhook?: { rateLimit: number | null; ordering: DeliveryOrdering; disabledAt: Date | null; deletedAt: Date | null };
}

/** The slot a held delivery's attempt was started for (AttemptInput.slot), sent at rather than reserving another. */
export interface ReservedSlot {
  webhookId: string;
  at: number;
}

/** Sent now, or from its rate-limit `slot` on (`at`, epoch ms, at most `slotLeadMs` away: see `atSlot`). */
export interface Admitted<D> {
  delivery: D;
  slot?: RateSlot;
}

export interface RateSlot {
  at: number;
  perSecond: number;
  /** Its row still says it waits for the rate limit (`waiting_for`): cleared when it is sent. */
  marked: boolean;
}

const disciplined = (d: AdmissionDelivery) => {
  const hook = d.webhook;
  // A deleted or disabled webhook's delivery is stopped by the attempt itself.
  return !!hook && !hook.deletedAt && !hook.disabledAt && (hook.rateLimit !== null || hook.ordering === 'per_object');
};

/** The delivery as ordered, when its webhook orders per object and the event is about one. */
function orderedDelivery(event: EventRow, d: AdmissionDelivery): OrderedDelivery | undefined {
  const objectId = d.webhook?.ordering === 'per_object' ? orderedObjectOf(event.result) : undefined;
  return objectId ? { eventId: event.id, webhookId: d.webhookId, objectId, userId: event.user_id, mode: event.mode } : undefined;
}

export async function admit<D extends AdmissionDelivery>(db: Db, event: EventRow, deliveries: D[], reserved?: ReservedSlot): Promise<{ send: Admitted<D>[]; paused: DeliveryPause[] }> {
  if (!deliveries.some(disciplined)) return { send: deliveries.map((delivery) => ({ delivery })), paused: [] };
  const decided = await Promise.all(deliveries.map(async (d): Promise<Admitted<D> | DeliveryPause> => (disciplined(d) ? admitOne(db, event, d, reserved) : { delivery: d })));
  return {
    send: decided.filter((x): x is Admitted<D> => 'delivery' in x),
    paused: decided.filter((x): x is DeliveryPause => !('delivery' in x)),
  };
}

async function admitOne<D extends AdmissionDelivery>(db: Db, event: EventRow, d: D, reserved?: ReservedSlot): Promise<Admitted<D> | DeliveryPause> {
  const { webhookId } = d;
  const attempt = d.attempts + 1;
  const ordered = orderedDelivery(event, d);
  if (ordered) {
    // Its statement also records (or clears) what the delivery waits for.
    const turn = await claimTurn(db, ordered);
    if (!turn.granted) return { webhookId, outcome: 'waiting', attempt, objectId: ordered.objectId, ...(turn.behind ? { behind: turn.behind } : {}) };
  }
  const perSecond = d.webhook!.rateLimit;
  if (perSecond === null) return { delivery: d };
  let at = reserved?.webhookId === webhookId ? reserved.at : undefined;
  if (at === undefined) {
    const slot = await reserveSlot(db, { eventId: event.id, webhookId, perSecond });
    if (slot.held) return heldUntil(webhookId, attempt, perSecond, slot.slotAt);
    at = slot.slotAt;
  }
  // An ordered delivery's row was cleared by its turn's statement.
  return { delivery: d, slot: { at, perSecond, marked: d.waitingFor !== null && !ordered } };
}

const heldUntil = (webhookId: string, attempt: number, perSecond: number, slotAt: number): DeliveryPause & { outcome: 'held' } => ({ webhookId, outcome: 'held', attempt, perSecond, slotAt, wakeAt: slotAt - slotLeadMs(perSecond) });

const sleepUntil = (at: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

/**
 * The longest an attempt waits for a send time it can go at: sends are queued that far ahead,
 * or a worker misses its send times that long, only when the workers are starved of CPU, and an
 * attempt held open longer could outlive its activity's timeout and be sent twice. The
 * delivery is held again instead: its run comes back for it.
 */
const MAX_SEND_WAIT_MS = 5000;

/**
 * Waits for an admitted delivery's slot, then takes its send time (src/engine/webhook-rate-limit.ts)
 * and waits for that. A request never leaves late: one that missed its send time (the worker's
 * timer fired late) would go right beside the next one's, so it takes another, until it can go
 * on time. Returns a pause instead when the sends already queued reach too far ahead, or when
 * this has gone on for `MAX_SEND_WAIT_MS`; its row then says it waits, and until when.
 * Otherwise send now, and await `sent` (the row's wait cleared) before recording the attempt.
 */
export async function atSlot(db: Db, eventId: string, d: AdmissionDelivery, slot: RateSlot): Promise<{ held: DeliveryPause } | { sent?: Promise<void> }> {
  const held = await sendTime(db, d, slot);
  if (held) {
    await markHeld(db, eventId, d.webhookId, held.slotAt);
    return { held };
  }
  // Nothing between the send time's check and the request: the row stops saying it waits while the request is on its way.
  // A failure to clear it must not fail an attempt already sent (its retry would send it again).
  if (!slot.marked) return {};
  const warn = (err: unknown) => log.warn('could not clear a sent delivery’s rate-limit wait', { event_id: eventId, webhook_id: d.webhookId, error: errorText(err) });
  return { sent: clearWaiting(db, eventId, d.webhookId).catch(warn) };
}

async function sendTime(db: Db, d: AdmissionDelivery, slot: RateSlot): Promise<(DeliveryPause & { outcome: 'held' }) | undefined> {
  await sleepUntil(slot.at);
  const until = Date.now() + MAX_SEND_WAIT_MS;
  for (;;) {
    const send = await takeSendTime(db, d.webhookId, slot.perSecond, MAX_SEND_WAIT_MS);
    if (!send.taken) return heldUntil(d.webhookId, d.attempts + 1, slot.perSecond, send.at);
    await sleepUntil(send.at);
    if (Date.now() - send.at <= slotToleranceMs(slot.perSecond)) return undefined;
    if (Date.now() >= until) return heldUntil(d.webhookId, d.attempts + 1, slot.perSecond, Date.now());
  }
}

/**
 * After an attempt's outcomes are recorded: each delivery to an ordered webhook that settled
 * (acknowledged, given up, stopped) hands the object's turn on, and its outcome names the
 * event that may take it (`next`), whose run the workflow tells.
 */
export async function passTurns<D extends AdmissionDelivery>(db: Db, event: EventRow, deliveries: Map<string, D>, outcomes: TargetOutcome[]): Promise<TargetOutcome[]> {
  return Promise.all(
    outcomes.map(async (o) => {
      if (o.outcome !== 'delivered' && o.outcome !== 'failed' && o.outcome !== 'stopped') return o;
      const d = deliveries.get(o.webhookId);
      const ordered = d && orderedDelivery(event, d);
      if (!ordered) return o;
      const next = await passTurn(db, ordered);
      return next ? { ...o, next } : o;
    }),
  );
}
