/**
 * The event types of the API specification, 6 (the value of an Event's `description`),
 * with when each is emitted, in the specification's words: the one list the API's
 * validation, the webhook subscriptions, the catalogue in the OpenAPI document and the
 * portal read.
 */
export const EVENT_TYPE_CATALOGUE = {
  'batch.created': 'Initial creation of a batch completes.',
  'batch.updated': 'The status of a batch changes.',
  'claims.submitted': 'A claim is submitted by form or interface.',
  'claims.cancelled': 'An existing claim is cancelled (by customer request or by the service for eligibility or processing reasons).',
  'claims.updated': 'Status or details of an in-progress claim change, including customer correspondence or replies from the claims team.',
  'claims.rejected': 'A claim is denied (ineligible, insufficient documentation, policy restriction or similar).',
  'claims.approved': 'A claim is approved, partially or in full.',
  'insurance.purchased': 'A standalone insurance completes purchase and is reported to the insurer.',
  'insurance.cancelled': 'A standalone insurance fails purchase, is refunded to the balance and is not reported to the insurer.',
  'payment.created': 'A bank account or credit card is charged for a transaction that yields a payment log, including wallet funding.',
  'payment.completed': 'A bank transfer completes and is credited to the balance.',
  'payment.failed': 'A bank transfer or card charge cannot be completed.',
  'refund.successful': 'A non-instantaneous refund request completes (for example a postal carrier refund that takes up to 15 days).',
  'report.new': 'A report is initially created; not yet downloadable.',
  'report.empty': 'A report was not generated because the date range had no data.',
  'report.available': 'A report becomes downloadable.',
  'report.failed': 'A report fails to generate.',
  'scan_form.created': 'Initial creation of a scan form completes.',
  'scan_form.updated': 'The status of a scan form changes.',
  'shipment.invoice.created': 'A shipment invoice is initially created.',
  'shipment.invoice.updated': 'A shipment invoice is adjusted and updated.',
  'tracker.created': 'Initial creation of a tracker completes.',
  'tracker.updated': 'A tracker is successfully updated.',
} as const;

export type EventType = keyof typeof EVENT_TYPE_CATALOGUE;

export const EVENT_TYPES = Object.keys(EVENT_TYPE_CATALOGUE) as EventType[];

export const isEventType = (value: unknown): value is EventType => typeof value === 'string' && Object.hasOwn(EVENT_TYPE_CATALOGUE, value);

/** A type's family: all but its last part (`tracker`, `shipment.invoice`). */
export const familyOf = (type: EventType): string => type.slice(0, type.lastIndexOf('.'));

/** The families, in the catalogue's order, each with its types: what a picker groups by. */
export const EVENT_FAMILIES: { family: string; types: EventType[] }[] = EVENT_TYPES.reduce<{ family: string; types: EventType[] }[]>((out, type) => {
  const family = familyOf(type);
  const last = out.at(-1);
  if (last?.family === family) last.types.push(type);
  else out.push({ family, types: [type] });
  return out;
}, []);
