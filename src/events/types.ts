/** The event types of the API specification, 6 (the value of an Event's `description`). */
export const EVENT_TYPES = [
  'batch.created', 'batch.updated',
  'claims.submitted', 'claims.cancelled', 'claims.updated', 'claims.rejected', 'claims.approved',
  'insurance.purchased', 'insurance.cancelled',
  'payment.created', 'payment.completed', 'payment.failed',
  'refund.successful',
  'report.new', 'report.empty', 'report.available', 'report.failed',
  'scan_form.created', 'scan_form.updated',
  'shipment.invoice.created', 'shipment.invoice.updated',
  'tracker.created', 'tracker.updated',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];


export const isEventType = (value: unknown): value is EventType =>
  typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);
