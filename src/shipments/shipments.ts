import type { Mode } from '../account/tables';
import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { ShipmentRow } from './tables';
import { ApiError, notFound } from '../errors/api-error';
import { isoSeconds } from '../format';
import { hasPrefix, newId } from '../ids';
import { normalizeState, normalizeZip } from '../end-shippers/addresses';
import { findEndShipper } from '../end-shippers/end-shippers';
import { ownedBy, ownerOf, type Principal } from '../account/principal';
import { quoteRates, zoneBetween, type ParcelSize } from './rates';
import type { z } from '../schema';
import type { ParcelInput, ShipmentAddressInput, ShipmentInput } from './shipments.schema';
import { trackerView } from './trackers';

/**
 * Shipments — only what buying with an EndShipper needs (the API specification, 4.4): create with
 * rates from the simulated carrier, retrieve, buy. A purchase is one transaction:
 * the shipment row is locked (a concurrent buy gets SHIPMENT.PURCHASE.IN_PROGRESS),
 * the production balance is debited (402 PAYMENT_REQUIRED when short; test mode is
 * free), postage, fees and the tracker are written.
 */

type AddressInput = z.output<typeof ShipmentAddressInput>;
type ParcelInputValue = z.output<typeof ParcelInput>;

/** A shipment address as returned: upper-cased, state and ZIP normalised, country US. */
function addressView(a: AddressInput, mode: Mode, now: string) {
  const upper = (v: string | null | undefined) => (v ? v.toUpperCase() : null);
  return {
    id: newId('adr'), object: 'Address', mode,
    name: upper(a.name), company: upper(a.company), street1: a.street1.toUpperCase(), street2: upper(a.street2),
    city: a.city.toUpperCase(), state: normalizeState(a.state) ?? a.state.toUpperCase(), zip: normalizeZip(a.zip)!, country: 'US',
    phone: upper(a.phone), email: a.email || null, created_at: now, updated_at: now,
  };
}

function parcelOf(p: ParcelInputValue, mode: Mode, now: string) {
  const size: ParcelSize = { weight: p.weight, ...(p.length !== undefined ? { length: p.length, width: p.width!, height: p.height! } : {}) };
  return {
    size,
    view: { id: newId('prcl'), object: 'Parcel', mode, length: size.length ?? null, width: size.width ?? null, height: size.height ?? null, predefined_package: null, weight: size.weight, created_at: now, updated_at: now },
  };
}

export function shipmentView(row: ShipmentRow, tracker?: ReturnType<typeof trackerView>) {
  return {
    id: row.id,
    object: 'Shipment' as const,
    created_at: isoSeconds(row.created_at),
    updated_at: isoSeconds(row.updated_at),
    mode: row.mode,
    status: tracker?.status ?? 'unknown',
    tracking_code: row.tracking_code,
    reference: row.reference,
    is_return: false,
    messages: [],
    options: row.options,
    batch_id: null,
    batch_status: null,
    batch_message: null,
    customs_info: null,
    from_address: row.from_address,
    to_address: row.to_address,
    return_address: row.from_address,
    buyer_address: row.to_address,
    insurance: row.insurance,
    order_id: null,
    parcel: row.parcel,
    postage_label: row.postage_label,
    rates: row.rates,
    selected_rate: row.selected_rate,
    refund_status: null,
    scan_form: null,
    tracker: tracker ?? null,
    forms: [],
    fees: row.fees,
    usps_zone: row.usps_zone,
  };
}

export async function createShipment(db: Db, who: Principal, input: z.output<typeof ShipmentInput>) {
  const now = isoSeconds(new Date());
  const from = addressView(input.from_address, who.mode, now);
  const to = addressView(input.to_address, who.mode, now);
  const parcel = parcelOf(input.parcel, who.mode, now);
  const options = input.options ?? {};
  const id = newId('shp');
  const zone = zoneBetween(from.zip, to.zip);
  const row = await db
    .insertInto('shipments')
    .values({
      id,
      ...ownerOf(who),
      reference: input.reference || null,
      from_address: JSON.stringify(from),
      to_address: JSON.stringify(to),
      parcel: JSON.stringify(parcel.view),
      options: JSON.stringify(options),
      rates: JSON.stringify(quoteRates(id, who.mode, parcel.size, zone, now)),
      usps_zone: zone,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return shipmentView(row);
}

async function ownShipment(db: Db, who: Principal, id: string): Promise<ShipmentRow> {
  const row = hasPrefix(id, 'shp')
    ? await db.selectFrom('shipments').selectAll().where('id', '=', id).where(ownedBy(who)).executeTakeFirst()
    : undefined;
  if (!row) throw notFound('Shipment not found.');
  return row;
}

export async function getShipment(db: Db, who: Principal, id: string) {
  const row = await ownShipment(db, who, id);
  const tracker = row.tracker_id ? await db.selectFrom('trackers').selectAll().where('id', '=', row.tracker_id).executeTakeFirst() : undefined;
  return shipmentView(row, tracker ? trackerView(tracker) : undefined);
}

export interface BuyInput {
  rateId: string;
  endShipperId: string;
  insurance?: string;
}

/** POST /shipments/:id/buy. Returns the bought shipment and its tracker row. */
export async function buyShipment(db: Db, who: Principal, shipmentId: string, input: BuyInput) {
  await ownShipment(db, who, shipmentId);
  const endShipper = await findEndShipper(db, who, input.endShipperId);
  try {
    return await db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('shipments').selectAll().where('id', '=', shipmentId).forUpdate().noWait().executeTakeFirstOrThrow();
      if (row.selected_rate) throw new ApiError('SHIPMENT.POSTAGE.EXISTS', 'Postage already purchased.');
      const rate = row.rates.find((r) => r.id === input.rateId);
      if (!rate) throw new ApiError('SHIPMENT.MISSING_RATE', 'A valid rate of the shipment is required to buy.', [{ field: 'rate', message: 'is not a rate of this shipment' }]);

      const fees = [
        { object: 'Fee', type: 'LabelFee', amount: '0.00000', charged: true, refunded: false },
        { object: 'Fee', type: 'PostageFee', amount: Number(rate.rate).toFixed(5), charged: true, refunded: false },
      ];
      if (input.insurance) {
        const fee = Math.max(Number(input.insurance) * Number(who.user.insurance_fee_rate), Number(who.user.insurance_fee_minimum));
        fees.push({ object: 'Fee', type: 'InsuranceFee', amount: fee.toFixed(5), charged: true, refunded: false });
      }
      if (who.mode === 'production') {
        const total = fees.reduce((sum, f) => sum + Number(f.amount), 0).toFixed(5);
        const payer = who.user.parent_id ?? who.user.id; // children are billed to their parent
        const debited = await trx
          .updateTable('users')
          .set({ balance: sql`balance - ${total}::numeric` })
          .where('id', '=', payer)
          .where(sql<boolean>`balance >= ${total}::numeric`)
          .executeTakeFirst();
        if (debited.numUpdatedRows === 0n) throw new ApiError('PAYMENT_REQUIRED', `Insufficient funds: this purchase costs $${total}.`);
      }

      const now = new Date();
      const trackingCode = `SIM${who.mode === 'test' ? 'T' : 'P'}${String(randomInt(1e9)).padStart(9, '0')}${String(randomInt(1e9)).padStart(9, '0')}`;
      const tracker = await trx
        .insertInto('trackers')
        .values({ id: newId('trk'), ...ownerOf(who), shipment_id: row.id, tracking_code: trackingCode, status: 'pre_transit', weight: Number((row.parcel as { weight: number }).weight) })
        .returningAll()
        .executeTakeFirstOrThrow();
      const label = {
        id: newId('pl'),
        object: 'PostageLabel',
        label_url: `https://labels.shiphook.invalid/${row.id}.png`,
        label_file_type: 'image/png',
        label_size: '4x6',
        label_resolution: 300,
        label_date: isoSeconds(now),
        created_at: isoSeconds(now),
        updated_at: isoSeconds(now),
      };
      const bought = await trx
        .updateTable('shipments')
        .set({
          end_shipper_id: endShipper.id,
          selected_rate: JSON.stringify(rate),
          tracking_code: trackingCode,
          postage_label: JSON.stringify(label),
          fees: JSON.stringify(fees),
          insurance: input.insurance ?? null,
          tracker_id: tracker.id,
          updated_at: now,
        })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { shipment: shipmentView(bought, trackerView(tracker)), tracker };
    });
  } catch (err) {
    if ((err as { code?: string }).code === '55P03') {
      throw new ApiError('SHIPMENT.PURCHASE.IN_PROGRESS', 'A purchase of this shipment is already in progress.');
    }
    throw err;
  }
}
