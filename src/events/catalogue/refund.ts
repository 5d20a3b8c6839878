import { CARRIER } from '../../shipments/rates';
import { z } from '../../schema';
import { family, identity, timestamps } from './result-object';

/**
 * `refund.*`: the Refund of a label's postage (the API specification shows none:
 * shiphook's model of what the real API's public documentation shows for one).
 */
export const RefundResult = z
  .looseObject({
    ...identity('Refund', 'rfnd_019c165bf026726f881eb7912864d7c7'),
    tracking_code: z.string().openapi({ example: 'EZ1000000001' }),
    confirmation_number: z.string().nullable().openapi({ description: 'The carrier\'s reference for the refund.' }),
    status: z.enum(['submitted', 'refunded', 'rejected', 'not_applicable']),
    carrier: z.string(),
    shipment_id: z.string(),
    ...timestamps,
  })
  .openapi('RefundResult', { description: 'The `result` of `refund.*` events: a Refund (shiphook\'s model; the API specification does not show one).' });

export const refundEvents = family(RefundResult, {
  'refund.successful': {
    result: {
      id: 'rfnd_019c165bf026726f881eb7912864d7c7',
      object: 'Refund',
      mode: 'test',
      tracking_code: 'EZ1000000001',
      confirmation_number: 'RF-20260214-88213',
      status: 'refunded',
      carrier: CARRIER,
      shipment_id: 'shp_019c1763d0337f788b9925bdcba9c472',
      created_at: '2026-01-31T12:00:00Z',
      updated_at: '2026-02-14T08:00:00Z',
    },
    previous_attributes: { status: 'submitted' },
  },
});
