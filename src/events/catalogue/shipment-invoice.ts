import { CARRIER } from '../../shipments/rates';
import { z } from '../../schema';
import { family, identity, money, timestamps } from './result-object';

/**
 * `shipment.invoice.*`: the ShipmentInvoice, what a bought shipment is billed, and
 * the carrier's later adjustments (the API specification shows none: shiphook's model).
 */
const Adjustment = z
  .looseObject({
    type: z.string().openapi({ example: 'weight_discrepancy' }),
    amount: money('1.75').openapi({ description: 'US dollars added (negative: refunded).' }),
    description: z.string(),
  })
  .openapi('ShipmentInvoiceAdjustment');

export const ShipmentInvoiceResult = z
  .looseObject({
    ...identity('ShipmentInvoice', 'shpinv_019c17a161877dce8a12468b2679b6c6'),
    shipment_id: z.string(),
    tracking_code: z.string().openapi({ example: 'EZ2000000002' }),
    carrier: z.string(),
    service: z.string(),
    status: z.enum(['invoiced', 'adjusted']),
    currency: z.string().openapi({ example: 'USD' }),
    amount: money('10.20').openapi({ description: 'What the shipment costs now: the rate plus adjustments, US dollars.' }),
    original_amount: money('8.45').openapi({ description: 'The rate it was bought at.' }),
    adjustments: z.array(Adjustment),
    ...timestamps,
  })
  .openapi('ShipmentInvoiceResult', { description: 'The `result` of `shipment.invoice.*` events: a ShipmentInvoice (shiphook\'s model; the API specification does not show one).' });

const created = {
  id: 'shpinv_019c17a161877dce8a12468b2679b6c6',
  object: 'ShipmentInvoice' as const,
  mode: 'test' as const,
  shipment_id: 'shp_019c14a310e576588c36b21ddb2d336c',
  tracking_code: 'EZ2000000002',
  carrier: CARRIER,
  service: 'Ground',
  status: 'invoiced' as const,
  currency: 'USD',
  amount: '8.45',
  original_amount: '8.45',
  adjustments: [],
  created_at: '2026-01-31T12:00:00Z',
  updated_at: '2026-01-31T12:00:00Z',
};

export const shipmentInvoiceEvents = family(ShipmentInvoiceResult, {
  'shipment.invoice.created': { result: created, previous_attributes: {} },
  'shipment.invoice.updated': {
    result: {
      ...created,
      status: 'adjusted',
      amount: '10.20',
      adjustments: [{ type: 'weight_discrepancy', amount: '1.75', description: 'The carrier weighed 40 oz; the label declared 15 oz.' }],
      updated_at: '2026-02-03T07:30:00Z',
    },
    previous_attributes: { status: 'invoiced', amount: '8.45' },
  },
});
