import { z } from '../../schema';
import { family, identity, timestamps } from './result-object';

/** `batch.*`: the Batch, with the fields the API specification gives its result (2.4). */
const count = z.number().int().nonnegative();
const BATCH_STATUSES = ['created', 'queued_for_purchase', 'creation_failed', 'postage_purchased', 'postage_purchase_failed'] as const;

export const BatchResult = z
  .looseObject({
    ...identity('Batch', 'batch_019c1784ef217a0d8472e546ef0d85e9'),
    state: z.string().openapi({ description: 'Where the batch is: `creating`, `created`, `purchasing`, `purchased`, `label_generating`, `label_generated`, …', example: 'purchased' }),
    num_shipments: count,
    reference: z.string().nullable(),
    ...timestamps,
    scan_form: z.looseObject({}).nullable().openapi({ description: 'The batch\'s ScanForm once one is made (see `scan_form.*`).' }),
    shipments: z.array(
      z.looseObject({
        batch_status: z.enum(BATCH_STATUSES).nullable(),
        batch_message: z.string().nullable(),
        id: z.string().openapi({ example: 'shp_019c156916017ae68e81442f365f95dc' }),
      }),
    ),
    status: z.looseObject(Object.fromEntries(BATCH_STATUSES.map((s) => [s, count])) as Record<(typeof BATCH_STATUSES)[number], typeof count>).openapi({
      description: 'How many of its shipments are in each `batch_status`.',
    }),
    pickup: z.looseObject({}).nullable(),
    label_url: z.string().nullable().openapi({ description: 'The batch\'s merged labels, once generated.' }),
  })
  .openapi('BatchResult', { description: 'The `result` of `batch.*` events: a Batch (the API specification, 2.4).' });

const shipments = ['shp_019c156916017ae68e81442f365f95dc', 'shp_019c1763d0337f788b9925bdcba9c472'];
const none = { created: 0, queued_for_purchase: 0, creation_failed: 0, postage_purchased: 0, postage_purchase_failed: 0 };
const created = {
  id: 'batch_019c1784ef217a0d8472e546ef0d85e9',
  object: 'Batch' as const,
  mode: 'test' as const,
  state: 'created',
  num_shipments: 2,
  reference: 'wave-2026-01-31-am',
  created_at: '2026-01-31T12:00:00Z',
  updated_at: '2026-01-31T12:00:04Z',
  scan_form: null,
  shipments: shipments.map((id) => ({ batch_status: 'created' as const, batch_message: null, id })),
  status: { ...none, created: 2 },
  pickup: null,
  label_url: null,
};

export const batchEvents = family(BatchResult, {
  'batch.created': { result: created, previous_attributes: {} },
  'batch.updated': {
    result: {
      ...created,
      state: 'purchased',
      updated_at: '2026-01-31T12:03:10Z',
      shipments: shipments.map((id) => ({ batch_status: 'postage_purchased' as const, batch_message: null, id })),
      status: { ...none, postage_purchased: 2 },
    },
    previous_attributes: { state: 'purchasing' },
  },
});
