import type { Db } from '../db/database';
import type { EndShipperRow } from './tables';
import { type PageParams, paginate } from '../db/paginate';
import { ApiError, notFound } from '../errors/api-error';
import { isoOffset } from '../format';
import { hasPrefix, newId } from '../ids';
import { normalizePhone, normalizeState, normalizeZip } from './addresses';
import type { EndShipperAddress } from './addresses.schema';
import type { z } from '../schema';
import { ownedBy, ownerOf, type Principal } from '../account/principal';

/**
 * EndShippers (the API specification, 2.5 and 4.4): only for users with the EndShipper capability.
 * PUT replaces the whole address (no partial update). When both `name` and
 * `company` are given, both are kept and `name` is the responsible party printed
 * first on labels.
 */

type EndShipperAddressInput = z.output<typeof EndShipperAddress>;

/**
 * An address as the real API returns it: text fields upper-cased, state, ZIP and
 * phone normalised (addresses.ts); email and street2 kept as given (street2 `""`
 * stays `""`, absent or null is null). Creation and PUT alike.
 */
function normalAddress(a: EndShipperAddressInput): Omit<EndShipperRow, 'id' | 'user_id' | 'mode' | 'created_at' | 'updated_at'> {
  const upper = (v: string | null | undefined) => (v ? v.toUpperCase() : null);
  return {
    name: upper(a.name),
    company: upper(a.company),
    street1: a.street1.toUpperCase(),
    street2: a.street2 === '' ? '' : upper(a.street2),
    city: a.city.toUpperCase(),
    state: normalizeState(a.state)!,
    zip: normalizeZip(a.zip)!,
    country: 'US',
    phone: normalizePhone(a.phone)!,
    email: a.email,
  };
}

export function endShipperView(row: EndShipperRow) {
  return {
    id: row.id,
    object: 'EndShipper' as const,
    mode: row.mode,
    name: row.name,
    company: row.company,
    street1: row.street1,
    street2: row.street2,
    city: row.city,
    state: row.state,
    zip: row.zip,
    country: row.country,
    phone: row.phone,
    email: row.email,
    created_at: isoOffset(row.created_at),
    updated_at: isoOffset(row.updated_at),
  };
}

export function requireEndShipperCapability(who: Principal): void {
  if (!who.user.end_shipper_enabled) {
    throw new ApiError('FORBIDDEN', 'EndShippers are not enabled for this account. Please contact sales to enable the EndShipper capability.');
  }
}

export async function findEndShipper(db: Db, who: Principal, id: string): Promise<EndShipperRow> {
  const row = hasPrefix(id, 'es')
    ? await db.selectFrom('end_shippers').selectAll().where('id', '=', id).where(ownedBy(who, { anyMode: true })).executeTakeFirst()
    : undefined;
  if (!row) throw notFound('EndShipper not found.');
  if (row.mode !== who.mode) throw new ApiError('MODE.CONFLICT', `This EndShipper belongs to ${row.mode} mode; the key is a ${who.mode} key.`);
  return row;
}

export async function createEndShipper(db: Db, who: Principal, address: EndShipperAddressInput) {
  requireEndShipperCapability(who);
  const values = normalAddress(address);
  const row = await db
    .insertInto('end_shippers')
    .values({ id: newId('es'), ...ownerOf(who), ...values })
    .returningAll()
    .executeTakeFirstOrThrow();
  return endShipperView(row);
}

export async function getEndShipper(db: Db, who: Principal, id: string) {
  return endShipperView(await ownEndShipper(db, who, id));
}

/** PUT (of an EndShipper `ownEndShipper` found): the whole address is replaced. */
export async function replaceEndShipper(db: Db, who: Principal, endShipper: EndShipperRow, address: EndShipperAddressInput) {
  const values = normalAddress(address);
  const row = await db
    .updateTable('end_shippers')
    .set({ ...values, updated_at: new Date() })
    .where('id', '=', endShipper.id)
    .where(ownedBy(who))
    .returningAll()
    .executeTakeFirstOrThrow();
  return endShipperView(row);
}

export async function listEndShippers(db: Db, who: Principal, page: PageParams) {
  requireEndShipperCapability(who);
  const query = db.selectFrom('end_shippers').selectAll().where(ownedBy(who));
  const { items, has_more } = await paginate(query, 'end_shippers', page);
  return { end_shippers: items.map(endShipperView), has_more };
}

/** The caller's EndShipper (the capability checked first); through the API one of the other mode is simply not there. */
export async function ownEndShipper(db: Db, who: Principal, id: string): Promise<EndShipperRow> {
  requireEndShipperCapability(who);
  const row = hasPrefix(id, 'es')
    ? await db.selectFrom('end_shippers').selectAll().where('id', '=', id).where(ownedBy(who)).executeTakeFirst()
    : undefined;
  if (!row) throw notFound('EndShipper not found.');
  return row;
}
