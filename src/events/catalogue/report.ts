import { z } from '../../schema';
import { family, identity, timestamps } from './result-object';

/**
 * `report.*`: a Report, a CSV of one kind of object over a date range (the API
 * specification shows none: shiphook's model of what the real API's public
 * documentation shows for one). Its `object` names the kind.
 */
export const ReportResult = z
  .looseObject({
    ...identity('ShipmentReport', 'shprep_019c170119c77ceb894adec27b35ce57'),
    object: z.enum(['ShipmentReport', 'PaymentLogReport', 'RefundReport', 'TrackerReport', 'ShipmentInvoiceReport']).openapi({
      description: 'The kind of report; its id\'s prefix says it too (`shprep_`, `plrep_`, `refrep_`, `trkrep_`, `shpinvrep_`).',
    }),
    status: z.enum(['new', 'empty', 'available', 'failed']),
    start_date: z.string().openapi({ format: 'date', example: '2026-01-01' }),
    end_date: z.string().openapi({ format: 'date', example: '2026-01-31' }),
    include_children: z.boolean(),
    url: z.string().nullable().openapi({ description: 'Where to download the CSV, once `available`; the link expires.' }),
    url_expires_at: z.string().nullable().openapi({ format: 'date-time' }),
    ...timestamps,
  })
  .openapi('ReportResult', { description: 'The `result` of `report.*` events: a Report (shiphook\'s model; the API specification does not show one).' });

const created = {
  id: 'shprep_019c170119c77ceb894adec27b35ce57',
  object: 'ShipmentReport' as const,
  mode: 'test' as const,
  status: 'new' as const,
  start_date: '2026-01-01',
  end_date: '2026-01-31',
  include_children: false,
  url: null,
  url_expires_at: null,
  created_at: '2026-01-31T12:00:00Z',
  updated_at: '2026-01-31T12:00:00Z',
};
const done = { updated_at: '2026-01-31T12:02:30Z' };

export const reportEvents = family(ReportResult, {
  'report.new': { result: created, previous_attributes: {} },
  'report.empty': { result: { ...created, ...done, status: 'empty' }, previous_attributes: { status: 'new' } },
  'report.available': {
    result: {
      ...created,
      ...done,
      status: 'available',
      url: 'https://reports.shiphook.invalid/shprep_019c170119c77ceb894adec27b35ce57/shipments-2026-01.csv',
      url_expires_at: '2026-01-31T12:07:30Z',
    },
    previous_attributes: { status: 'new' },
  },
  'report.failed': { result: { ...created, ...done, status: 'failed' }, previous_attributes: { status: 'new' } },
});
