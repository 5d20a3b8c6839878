import { call } from './http';
import type { TestSystem } from './system';

export const ADDRESS = {
  name: 'Jack Sparrow',
  company: 'Black Pearl LLC',
  street1: '388 Townsend St',
  street2: 'Apt 20',
  city: 'San Francisco',
  state: 'California',
  zip: '94107-1670',
  country: 'US',
  phone: '+1 (415) 555-0100',
  email: 'jack@example.com',
};

export const SHIPMENT = {
  from_address: { name: 'Sender', street1: '1 Main St', city: 'Boston', state: 'MA', zip: '02110', country: 'US' },
  to_address: { name: 'Receiver', street1: '388 Townsend St', city: 'San Francisco', state: 'CA', zip: '94107', country: 'US' },
  parcel: { weight: 15, length: 10, width: 8, height: 4 },
  reference: 'order-42',
};

export async function endShipper(sys: TestSystem, key: string) {
  const res = await call(sys, 'POST', '/end_shippers', { key, body: { address: ADDRESS } });
  if (res.status !== 201) throw new Error(`end shipper: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function shipment(sys: TestSystem, key: string, overrides: Record<string, unknown> = {}) {
  const res = await call(sys, 'POST', '/shipments', { key, body: { shipment: { ...SHIPMENT, ...overrides } } });
  if (res.status !== 201) throw new Error(`shipment: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}
