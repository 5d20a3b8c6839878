import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { ShipmentRow } from '../db/tables/shipping';
import { ApiError, FieldErrors, notFound } from '../errors/api-error';
import { isoSeconds } from '../format';
import { hasPrefix, newId } from '../ids';
import { normalizeState, normalizeZip } from './addresses';
import { findEndShipper } from './end-shippers';
import type { Principal } from './principal';
import { quoteRates, zoneBetween, type ParcelSize } from './rates';
import { trackerView } from './trackers';

/**
 * Shipments — only what buying with an EndShipper needs (seed 4.4): create with
 * rates from the simulated carrier, retrieve, buy. A purchase is one transaction:
 * the shipment row is locked (a concurrent buy gets SHIPMENT.PURCHASE.IN_PROGRESS),
 * the production balance is debited (402 PAYMENT_REQUIRED when short; test mode is
 * free), postage, fees and the tracker are written.
 */

const ADDRESS_FIELDS = ['name', 'company', 'street1', 'street2', 'city', 'state', 'zip', 'country', 'phone', 'email'] as const;

function parseShipmentAddress(input: unknown, field: string, errors: FieldErrors, mode: string, now: string) {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    errors.add(field, 'is required');
    return undefined;
  }
  const raw = input as Record<string, unknown>;
  const out: Record<string, unknown> = { id: newId('adr'), object: 'Address', mode };
  for (const f of ADDRESS_FIELDS) {
    const v = raw[f];
    if (v !== undefined && v !== null && typeof v !== 'string') errors.add(`${field}.${f}`, 'must be a string');
    out[f] = typeof v === 'string' ? v.trim().toUpperCase() : null;
  }
  for (const f of ['street1', 'city', 'state', 'zip'] as const) if (!out[f]) errors.add(`${field}.${f}`, 'is required');
  if (out.zip) {
    const zip = normalizeZip(out.zip as string);
    if (!zip) errors.add(`${field}.zip`, 'must be a 5-digit ZIP or ZIP+4');
    out.zip = zip ?? out.zip;
  }
  if (out.state) out.state = normalizeState(out.state as string) ?? out.state;
  out.country = out.country ?? 'US';
  if (out.country !== 'US') errors.add(`${field}.country`, 'only US shipments are supported by the simulated carrier');
  out.email = typeof raw.email === 'string' ? raw.email.trim() : null;
  out.created_at = now;
  out.updated_at = now;
  return out;
}

function parseParcel(input: unknown, mode: string, now: string) {
  const errors = new FieldErrors();
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    errors.add('parcel', 'is required');
    errors.throwIfAny('PARCEL.PARAMETERS.INVALID', 'Parcel parameters missing or invalid.');
  }
  const raw = input as Record<string, unknown>;
  const num = (f: string) => (typeof raw[f] === 'number' ? (raw[f] as number) : typeof raw[f] === 'string' && raw[f] !== '' ? Number(raw[f]) : undefined);
  const weight = num('weight');
  if (weight === undefined || !Number.isFinite(weight) || weight <= 0) errors.add('parcel.weight', 'is required: ounces, greater than zero');
  const dims = (['length', 'width', 'height'] as const).map((f) => [f, num(f)] as const);
  const given = dims.filter(([, v]) => v !== undefined);
  if (given.length > 0 && given.length < 3) errors.add('parcel', 'length, width and height are all required when one is given');
  for (const [f, v] of given) if (!Number.isFinite(v) || v! <= 0) errors.add(`parcel.${f}`, 'must be inches, greater than zero');
  errors.throwIfAny('PARCEL.PARAMETERS.INVALID', 'Parcel parameters missing or invalid; weight in ounces and dimensions in inches.');
  const size: ParcelSize = { weight: weight!, ...(given.length === 3 ? Object.fromEntries(given) : {}) };
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

export async function createShipment(db: Db, who: Principal, input: Record<string, unknown>) {
  const now = isoSeconds(new Date());
  const errors = new FieldErrors();
  const from = parseShipmentAddress(input.from_address, 'from_address', errors, who.mode, now);
  const to = parseShipmentAddress(input.to_address, 'to_address', errors, who.mode, now);
  errors.throwIfAny('SHIPMENT.INVALID', 'Not enough information to create the shipment.');
  const parcel = parseParcel(input.parcel, who.mode, now);
  const options = input.options ?? {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new ApiError('SHIPMENT.OPTIONS.INVALID', 'Options invalid.', [{ field: 'options', message: 'must be an object' }]);
  }
  if (input.reference !== undefined && input.reference !== null && typeof input.reference !== 'string') {
    throw new ApiError('SHIPMENT.INVALID_PARAMS', 'Parameters invalid.', [{ field: 'reference', message: 'must be a string' }]);
  }
  const id = newId('shp');
  const zone = zoneBetween(from!.zip as string, to!.zip as string);
  const row = await db
    .insertInto('shipments')
    .values({
      id,
      user_id: who.user.id,
      mode: who.mode,
      reference: (input.reference as string | undefined) ?? null,
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
    ? await db.selectFrom('shipments').selectAll().where('id', '=', id).where('user_id', '=', who.user.id).where('mode', '=', who.mode).executeTakeFirst()
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

export function parseBuy(body: Record<string, unknown>): BuyInput {
  const errors = new FieldErrors();
  const rate = body.rate as { id?: unknown } | undefined;
  const rateId = typeof rate === 'object' && rate !== null ? rate.id : undefined;
  if (typeof rateId !== 'string' || !rateId) errors.add('rate', 'cannot be blank: give {"rate": {"id": "rate_…"}}');
  if (typeof body.end_shipper_id !== 'string' || !body.end_shipper_id) errors.add('end_shipper_id', 'cannot be blank');
  const insurance = body.insurance;
  if (insurance !== undefined && insurance !== null && !/^\d+(\.\d+)?$/.test(String(insurance))) errors.add('insurance', 'must be a dollar amount');
  errors.throwIfAny('PARAMETER.REQUIRED', 'Missing required parameter.');
  return { rateId: rateId as string, endShipperId: body.end_shipper_id as string, insurance: insurance === undefined || insurance === null ? undefined : String(insurance) };
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
        .values({ id: newId('trk'), user_id: who.user.id, mode: who.mode, shipment_id: row.id, tracking_code: trackingCode, status: 'pre_transit', weight: Number((row.parcel as { weight: number }).weight) })
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
