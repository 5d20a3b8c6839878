import { z } from '../../schema';
import { family, identity, timestamps } from './result-object';

/**
 * `scan_form.*`: a ScanForm, the one document a carrier scans to accept many parcels
 * (the API specification shows none: shiphook's model of what the real API's public
 * documentation shows for one).
 */
export const ScanFormResult = z
  .looseObject({
    ...identity('ScanForm', 'sf_019c143236bd77ef8d2f3e1a27b33e9c'),
    status: z.enum(['creating', 'created', 'failed']),
    message: z.string().nullable().openapi({ description: 'Why it failed, when it did.' }),
    tracking_codes: z.array(z.string()).openapi({ example: ['EZ1000000001', 'EZ2000000002'], description: 'The parcels it covers.' }),
    batch_id: z.string().nullable(),
    form_url: z.string().nullable().openapi({ description: 'The form to print, once `created`.' }),
    form_file_type: z.string().nullable(),
    address: z.looseObject({ name: z.string().nullable(), street1: z.string(), city: z.string(), state: z.string(), zip: z.string(), country: z.string() }).nullable(),
    ...timestamps,
  })
  .openapi('ScanFormResult', { description: 'The `result` of `scan_form.*` events: a ScanForm (shiphook\'s model; the API specification does not show one).' });

const created = {
  id: 'sf_019c143236bd77ef8d2f3e1a27b33e9c',
  object: 'ScanForm' as const,
  mode: 'test' as const,
  status: 'creating' as const,
  message: null,
  tracking_codes: ['EZ1000000001', 'EZ2000000002'],
  batch_id: 'batch_019c1784ef217a0d8472e546ef0d85e9',
  form_url: null,
  form_file_type: null,
  address: { name: 'Jack Sparrow', street1: '388 TOWNSEND ST', city: 'SAN FRANCISCO', state: 'CA', zip: '94107', country: 'US' },
  created_at: '2026-01-31T12:05:00Z',
  updated_at: '2026-01-31T12:05:00Z',
};

export const scanFormEvents = family(ScanFormResult, {
  'scan_form.created': { result: created, previous_attributes: {} },
  'scan_form.updated': {
    result: {
      ...created,
      status: 'created',
      form_url: 'https://labels.shiphook.invalid/sf_019c143236bd77ef8d2f3e1a27b33e9c.pdf',
      form_file_type: 'application/pdf',
      updated_at: '2026-01-31T12:05:20Z',
    },
    previous_attributes: { status: 'creating' },
  },
});
