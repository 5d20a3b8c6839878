import { z } from '../../schema';
import { family, identity, money, timestamps } from './result-object';

/**
 * `payment.*`: the PaymentLog of a charge or transfer to the balance (the API
 * specification shows none: shiphook's model of what the real API's public
 * documentation shows for one).
 */
export const PaymentLogResult = z
  .looseObject({
    ...identity('PaymentLog', 'pl_019c152cd2bc7c9e8dd32cf2ecb73ebc'),
    source_type: z.enum(['credit_card', 'bank_account']).openapi({ description: 'Where the money comes from.' }),
    target_type: z.string().openapi({ example: 'wallet', description: 'Where it goes: the account\'s balance.' }),
    charge_type: z.string().openapi({ example: 'recharge', description: '`recharge` (automatic, at `recharge_threshold`) or `manual`.' }),
    status: z.enum(['pending', 'completed', 'failed']).openapi({ description: 'A card charge is `completed` at once; a bank transfer is `pending` until it completes or fails.' }),
    amount: money('100.00'),
    last4: z.string().openapi({ example: '6789', description: 'The last four digits of the card or account.' }),
    date: z.string().openapi({ format: 'date', example: '2026-01-31' }),
    ...timestamps,
  })
  .openapi('PaymentLogResult', { description: 'The `result` of `payment.*` events: a PaymentLog (shiphook\'s model; the API specification does not show one).' });

const created = {
  id: 'pl_019c152cd2bc7c9e8dd32cf2ecb73ebc',
  object: 'PaymentLog' as const,
  mode: 'test' as const,
  source_type: 'bank_account' as const,
  target_type: 'wallet',
  charge_type: 'recharge',
  status: 'pending' as const,
  amount: '100.00',
  last4: '6789',
  date: '2026-01-31',
  created_at: '2026-01-31T12:00:00Z',
  updated_at: '2026-01-31T12:00:00Z',
};

export const paymentEvents = family(PaymentLogResult, {
  'payment.created': { result: created, previous_attributes: {} },
  'payment.completed': { result: { ...created, status: 'completed', updated_at: '2026-02-03T16:00:00Z' }, previous_attributes: { status: 'pending' } },
  'payment.failed': { result: { ...created, status: 'failed', updated_at: '2026-02-03T16:00:00Z' }, previous_attributes: { status: 'pending' } },
});
