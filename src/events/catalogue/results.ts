import type { z } from '../../schema';
import type { EventType } from '../types';
import { batchEvents } from './batch';
import { claimEvents } from './claims';
import { insuranceEvents } from './insurance';
import { paymentEvents } from './payment';
import { refundEvents } from './refund';
import { reportEvents } from './report';
import type { EventExample, ResultFamily } from './result-object';
import { scanFormEvents } from './scan-form';
import { shipmentInvoiceEvents } from './shipment-invoice';
import { trackerEvents } from './tracker';

/**
 * The event catalogue: for each of the API specification's 23 event types, the schema
 * of its `result` and a realistic example. The OpenAPI document publishes it as its
 * `webhooks` (src/api/openapi-webhooks.ts) and test events send its examples
 * (src/webhooks/test-events.ts). Batches follow the API specification (2.4), trackers
 * shiphook's own tracker view; the other objects are shiphook's models.
 */
export interface CatalogueEntry {
  result: z.ZodType;
  example: EventExample;
}

const entries = <T extends EventType>({ schema, examples }: ResultFamily<T>) =>
  Object.fromEntries(Object.entries<EventExample>(examples).map(([type, example]) => [type, { result: schema, example }])) as Record<T, CatalogueEntry>;

export const EVENT_RESULTS = {
  ...entries(batchEvents),
  ...entries(claimEvents),
  ...entries(insuranceEvents),
  ...entries(paymentEvents),
  ...entries(refundEvents),
  ...entries(reportEvents),
  ...entries(scanFormEvents),
  ...entries(shipmentInvoiceEvents),
  ...entries(trackerEvents),
} satisfies Record<EventType, CatalogueEntry>;

/** A type's example as a receiver gets it: the whole Event around the example's `result`, on its first attempt. */
export function deliveredExample(type: EventType) {
  const { result, previous_attributes } = EVENT_RESULTS[type].example;
  const at = new Date(String(result.updated_at)).toISOString();
  return {
    id: 'evt_019c174ee34c7af3854df1d9b44efbf9',
    object: 'Event',
    mode: result.mode,
    description: type,
    status: 'in_queue',
    previous_attributes,
    pending_urls: ['https://example.com/shiphook/events'],
    completed_urls: [],
    created_at: at,
    updated_at: at,
    result,
  };
}
