import { z } from '../../schema';
import { family, identity, money, timestamps } from './result-object';

/**
 * `insurance.*`: a standalone Insurance, for a parcel shipped outside the platform
 * (the API specification shows none: shiphook's model of what the real API's public
 * documentation shows for one).
 */
const Address = z
  .looseObject({ name: z.string().nullable(), street1: z.string(), city: z.string(), state: z.string(), zip: z.string(), country: z.string() })
  .openapi('InsuranceAddress');

export const InsuranceResult = z
  .looseObject({
    ...identity('Insurance', 'ins_019c15039d167ef0859c283b8d975e06'),
    reference: z.string().nullable(),
    tracking_code: z.string().openapi({ example: 'EZ4000000004' }),
    carrier: z.string(),
    amount: money('150.00').openapi({ description: 'The insured value, US dollars.' }),
    provider: z.string().nullable(),
    provider_id: z.string().nullable().openapi({ description: 'The insurer\'s reference, once reported to it.' }),
    shipment_id: z.string().nullable().openapi({ description: 'Null: standalone insurance covers a parcel not bought here.' }),
    status: z.enum(['new', 'pending', 'purchased', 'failed', 'cancelled']),
    from_address: Address,
    to_address: Address,
    fee: z.looseObject({ object: z.literal('Fee'), type: z.literal('InsuranceFee'), amount: money('1.50'), charged: z.boolean(), refunded: z.boolean() }).nullable(),
    messages: z.array(z.string()),
    ...timestamps,
  })
  .openapi('InsuranceResult', { description: 'The `result` of `insurance.*` events: an Insurance (shiphook\'s model; the API specification does not show one).' });

const purchased = {
  id: 'ins_019c15039d167ef0859c283b8d975e06',
  object: 'Insurance' as const,
  mode: 'test' as const,
  reference: 'order-42',
  tracking_code: 'EZ4000000004',
  carrier: 'USPS',
  amount: '150.00',
  provider: 'shipsurance',
  provider_id: 'SHIPS-2026-0131-4471',
  shipment_id: null,
  status: 'purchased' as const,
  from_address: { name: 'Jack Sparrow', street1: '388 TOWNSEND ST', city: 'SAN FRANCISCO', state: 'CA', zip: '94107', country: 'US' },
  to_address: { name: 'Elizabeth Swann', street1: '1 MAIN ST', city: 'BOSTON', state: 'MA', zip: '02110', country: 'US' },
  fee: { object: 'Fee' as const, type: 'InsuranceFee' as const, amount: '1.50', charged: true, refunded: false },
  messages: [],
  created_at: '2026-01-31T12:00:00Z',
  updated_at: '2026-01-31T12:00:02Z',
};

export const insuranceEvents = family(InsuranceResult, {
  'insurance.purchased': { result: purchased, previous_attributes: { status: 'pending' } },
  'insurance.cancelled': {
    result: {
      ...purchased,
      status: 'cancelled',
      provider_id: null,
      fee: { ...purchased.fee, refunded: true },
      messages: ['The insurer could not cover this parcel: the fee was refunded to the balance.'],
    },
    previous_attributes: { status: 'pending' },
  },
});
