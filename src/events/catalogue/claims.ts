import { z } from '../../schema';
import { family, identity, money, timestamps } from './result-object';

/**
 * `claims.*`: the Claim (the API specification shows no claim: shiphook's model of
 * what the real API's public documentation shows for one).
 */
const CLAIM_STATUSES = ['submitted', 'in_review', 'approved', 'approved_partial', 'rejected', 'cancelled'] as const;
const HistoryEntry = z.looseObject({ status: z.enum(CLAIM_STATUSES), status_detail: z.string(), status_timestamp: z.string().openapi({ format: 'date-time' }) });

export const ClaimResult = z
  .looseObject({
    ...identity('Claim', 'clm_019c1474b0a2774180bfa383cefa4a26'),
    tracking_code: z.string().openapi({ example: 'EZ4000000004' }),
    shipment_id: z.string().nullable(),
    insurance_id: z.string().nullable(),
    type: z.enum(['damage', 'loss', 'theft']),
    status: z.enum(CLAIM_STATUSES),
    status_detail: z.string().openapi({ description: 'Why the claim is where it is; for a rejection, the reason.' }),
    status_timestamp: z.string().openapi({ format: 'date-time' }),
    requested_amount: money('120.00'),
    approved_amount: money('120.00').nullable().openapi({ description: 'US dollars; set once approved (`approved_partial`: all that will be paid).' }),
    insurance_amount: money('150.00'),
    salvage_value: money('0.00').nullable(),
    payment_method: z.string().openapi({ example: 'easypost_wallet' }),
    recipient_name: z.string().nullable(),
    contact_email: z.string().nullable(),
    check_delivery_address: z.string().nullable(),
    description: z.string(),
    reference: z.string().nullable(),
    attachments: z.array(z.string()).openapi({ description: 'URLs of the evidence sent with the claim.' }),
    history: z.array(HistoryEntry),
    ...timestamps,
  })
  .openapi('ClaimResult', { description: 'The `result` of `claims.*` events: a Claim (shiphook\'s model; the API specification does not show one).' });

const submittedAt = '2026-02-06T09:15:00Z';
const submitted = {
  id: 'clm_019c1474b0a2774180bfa383cefa4a26',
  object: 'Claim' as const,
  mode: 'test' as const,
  tracking_code: 'EZ4000000004',
  shipment_id: 'shp_019c17d7cebc7127860fc7d161304d6e',
  insurance_id: 'ins_019c15039d167ef0859c283b8d975e06',
  type: 'damage' as const,
  status: 'submitted' as const,
  status_detail: 'Claim submitted.',
  status_timestamp: submittedAt,
  requested_amount: '120.00',
  approved_amount: null as string | null,
  insurance_amount: '150.00',
  salvage_value: null,
  payment_method: 'easypost_wallet',
  recipient_name: 'Jack Sparrow',
  contact_email: 'jack@example.com',
  check_delivery_address: null,
  description: 'The ceramic vase arrived in pieces; the box was crushed on one side.',
  reference: 'order-42',
  attachments: ['https://claims.shiphook.invalid/clm_019c1474b0a2774180bfa383cefa4a26/photo-1.jpg'],
  history: [{ status: 'submitted' as const, status_detail: 'Claim submitted.', status_timestamp: submittedAt }],
  created_at: submittedAt,
  updated_at: submittedAt,
};

/** The claim moved on from `submitted` (its history keeps the steps). */
function movedTo(status: (typeof CLAIM_STATUSES)[number], detail: string, at: string, more: Partial<typeof submitted> = {}) {
  const inReview = { status: 'in_review' as const, status_detail: 'Under review by the claims team.', status_timestamp: '2026-02-07T10:00:00Z' };
  const steps = status === 'in_review' || status === 'cancelled' ? [] : [inReview];
  return {
    ...submitted,
    ...more,
    status,
    status_detail: detail,
    status_timestamp: at,
    history: [...submitted.history, ...steps, { status, status_detail: detail, status_timestamp: at }],
    updated_at: at,
  };
}

export const claimEvents = family(ClaimResult, {
  'claims.submitted': { result: submitted, previous_attributes: {} },
  'claims.cancelled': { result: movedTo('cancelled', 'Cancelled at the customer\'s request.', '2026-02-06T11:30:00Z'), previous_attributes: { status: 'submitted' } },
  'claims.updated': {
    result: movedTo('in_review', 'Under review by the claims team.', '2026-02-07T10:00:00Z'),
    previous_attributes: { status: 'submitted' },
  },
  'claims.rejected': {
    result: movedTo('rejected', 'The photos do not show damage to the item; a claim for damage needs them.', '2026-02-10T15:20:00Z'),
    previous_attributes: { status: 'in_review' },
  },
  'claims.approved': {
    result: movedTo('approved', 'Approved in full.', '2026-02-10T15:20:00Z', { approved_amount: '120.00' }),
    previous_attributes: { status: 'in_review' },
  },
});
