import type { Mode } from '../account/tables';
import type { Db } from '../db/database';
import { ApiError } from '../errors/api-error';
import { isoSeconds } from '../format';
import { newId } from '../ids';
import type { EventType } from '../events/types';
import { publishEvent } from '../events/publish';
import type { Principal } from '../account/principal';
import { CARRIER } from '../shipments/rates';
import { ownWebhook } from './webhooks';

/**
 * Test events ("send test webhook"): a sample Event of a chosen type (the API specification, 6)
 * delivered to one webhook only, through the same outbox, workflow and attempt log
 * as every event, so it can be inspected and replayed like one. Receivers see
 * `X-Shiphook-Test: true` (a header customers cannot set: the brand prefix is
 * reserved), and the sample object's id says so too (`…_test_…`).
 */
export const DEFAULT_TEST_EVENT: EventType = 'tracker.updated';

const OBJECT_OF: Record<string, string> = {
  batch: 'Batch', claims: 'Claim', insurance: 'Insurance', payment: 'Payment', refund: 'Refund',
  report: 'Report', scan_form: 'ScanForm', shipment: 'ShipmentInvoice', tracker: 'Tracker',
};

/** A plausible result of that type; batches and trackers carry the fields the API specification and our trackers have. */
export function sampleResult(type: EventType, mode: Mode): Record<string, unknown> {
  const now = isoSeconds(new Date());
  const kind = type.split('.')[0]!;
  const object = OBJECT_OF[kind] ?? 'Object';
  const id = `${kind === 'shipment' ? 'shpinv' : kind}_test_${newId('evt').slice(4, 20)}`;
  if (kind === 'tracker') {
    return {
      id, object, mode, tracking_code: 'EZ1000000001', status: type === 'tracker.created' ? 'pre_transit' : 'in_transit', status_detail: 'unknown',
      carrier: CARRIER, weight: 15.0, shipment_id: null, est_delivery_date: null, signed_by: null, public_url: null,
      tracking_details: [], fees: [], created_at: now, updated_at: now,
    };
  }
  if (kind === 'batch') {
    return {
      id, object, mode, state: type === 'batch.created' ? 'created' : 'purchased', num_shipments: 0, reference: 'test', created_at: now, updated_at: now,
      scan_form: null, shipments: [], status: { created: 0, queued_for_purchase: 0, creation_failed: 0, postage_purchased: 0, postage_purchase_failed: 0 },
      pickup: null, label_url: null,
    };
  }
  return { id, object, mode, status: type.split('.').slice(1).join('.'), created_at: now, updated_at: now };
}

/** POST /webhooks/:id/test `{description?}` → the Event as it is delivered (with `result`). */
export async function sendTestEvent(db: Db, who: Principal, webhookId: string, description: EventType = DEFAULT_TEST_EVENT) {
  const hook = await ownWebhook(db, who, webhookId);
  if (hook.disabled_at) {
    throw new ApiError('WEBHOOK.INVALID', 'The webhook is disabled; update it to re-enable it, then send a test event.', [{ field: 'id', message: 'webhook is disabled' }]);
  }
  return publishEvent(db, {
    userId: who.user.id,
    mode: who.mode,
    description,
    result: sampleResult(description, who.mode),
    previousAttributes: description.endsWith('.updated') ? { status: 'unknown' } : {},
    test: { webhookId: hook.id },
  });
}
