import type { Caller } from '../account/principal';
import type { TemporalDeps } from '../engine/client';
import { startTestTracker } from '../engine/starters';
import { defineOperation } from '../operation';
import { buyWithEndShipper } from './purchase';
import type { z } from '../schema';
import { type BuyInput, createShipment, getShipment } from './shipments';
import { BUY_INPUT, BuyBody, CreateShipmentBody, Shipment, SHIPMENT_INPUT } from './shipments.schema';

/** Shipments: only what buying with an EndShipper needs (the API specification, 4.4). */
const buyInput = (body: z.output<typeof BuyBody>): BuyInput => ({
  rateId: body.rate.id,
  endShipperId: body.end_shipper_id,
  insurance: body.insurance === undefined || body.insurance === null ? undefined : String(body.insurance),
});
type Context = Caller & TemporalDeps;
const tag = 'Shipments';

export const shipmentOperations = [
  defineOperation({ method: 'POST', path: '/shipments', access: 'any key', idempotent: true,
    body: { schema: CreateShipmentBody, rules: SHIPMENT_INPUT },
    status: 201, response: Shipment, tag, summary: 'Create a shipment (rated by the simulated carrier)', links: { 'GET /shipments/:id': '/id', 'POST /shipments/:id/buy': '/id' },
    handler: ({ body }, { db, who }: Context) => createShipment(db, who, body.shipment) }),
  defineOperation({ method: 'GET', path: '/shipments/:id', access: 'any key', params: { id: 'shp' },
    status: 200, response: Shipment, tag, summary: 'Retrieve a shipment',
    handler: ({ params }, { db, who }: Context) => getShipment(db, who, params.id) }),
  // A production purchase debits the balance of the caller's user row, which the api caches.
  defineOperation({ method: 'POST', path: '/shipments/:id/buy', access: 'any key', params: { id: 'shp' }, rateLimit: 'purchases', changesCaller: true, idempotent: true,
    body: { schema: BuyBody, rules: BUY_INPUT },
    status: 200, response: Shipment, tag, summary: 'Buy a shipment with an EndShipper',
    handler: ({ params, body }, ctx: Context) => buyWithEndShipper(ctx.db, ctx.who, params.id, buyInput(body), (trackerId) => startTestTracker(ctx, trackerId)) }),
];
