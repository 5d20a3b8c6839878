import { CARRIER } from '../../shipments/rates';
import { Tracker } from '../../shipments/shipments.schema';
import { TRACKER_STATUSES } from '../../shipments/tables';
import { z } from '../../schema';
import { family, identity } from './result-object';

/**
 * `tracker.*`: the Tracker, as shiphook's trackers are shown (src/shipments/trackers.ts
 * `trackerView`, the Shipment's `tracker`), opened up for the carriers' statuses and
 * tracking details and for trackers without a shipment.
 */
const TrackingDetail = z
  .looseObject({
    object: z.literal('TrackingDetail'),
    message: z.string(),
    status: z.string(),
    datetime: z.string().openapi({ format: 'date-time' }),
    source: z.string(),
    tracking_location: z.looseObject({ city: z.string().nullable(), state: z.string().nullable(), country: z.string().nullable(), zip: z.string().nullable() }),
  })
  .openapi('TrackingDetail');

export const TrackerResult = z
  .looseObject({
    ...Tracker.shape,
    ...identity('Tracker', 'trk_019c185b47e57a038066b49aa34a190a'),
    tracking_code: z.string().openapi({ example: 'EZ2000000002', description: 'What `GET /v2/events?tracking_code=` finds its events by.' }),
    status: z.enum([...TRACKER_STATUSES, 'unknown', 'available_for_pickup', 'return_to_sender', 'failure', 'cancelled', 'error']).openapi({
      description: 'shiphook\'s test trackers move `pre_transit` → `in_transit` → `out_for_delivery` → `delivered`; the other values are carriers\' outcomes.',
    }),
    shipment_id: z.string().nullable().openapi({ description: 'The Shipment bought with this tracking code; null for a tracker created on its own.' }),
    tracking_details: z.array(TrackingDetail).openapi({ description: 'The carrier\'s scans, oldest first (empty until the carrier reports).' }),
  })
  .openapi('TrackerResult', { description: 'The `result` of `tracker.*` events: a Tracker.' });

const location = { city: 'BOSTON', state: 'MA', country: 'US', zip: '02110' };
const created = {
  id: 'trk_019c185b47e57a038066b49aa34a190a',
  object: 'Tracker' as const,
  mode: 'test' as const,
  tracking_code: 'EZ2000000002',
  status: 'pre_transit' as const,
  status_detail: 'status_update',
  carrier: CARRIER,
  weight: 15,
  shipment_id: 'shp_019c14a310e576588c36b21ddb2d336c',
  est_delivery_date: '2026-02-04T00:00:00Z',
  signed_by: null,
  public_url: null,
  tracking_details: [
    { object: 'TrackingDetail' as const, message: 'Shipping label created', status: 'pre_transit', datetime: '2026-01-31T12:00:00Z', source: CARRIER, tracking_location: location },
  ],
  fees: [],
  created_at: '2026-01-31T12:00:00Z',
  updated_at: '2026-01-31T12:00:00Z',
};

export const trackerEvents = family(TrackerResult, {
  'tracker.created': { result: created, previous_attributes: {} },
  'tracker.updated': {
    result: {
      ...created,
      status: 'in_transit',
      status_detail: 'arrived_at_facility',
      tracking_details: [
        ...created.tracking_details,
        { object: 'TrackingDetail', message: 'Arrived at origin facility', status: 'in_transit', datetime: '2026-01-31T21:40:00Z', source: CARRIER, tracking_location: location },
      ],
      updated_at: '2026-01-31T21:41:00Z',
    },
    previous_attributes: { status: 'pre_transit' },
  },
});
