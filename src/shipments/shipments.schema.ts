import { normalizeZip, ZIP } from '../end-shippers/addresses';
import { dollarAmount, freeFormObject, type InputRules, MAX_TEXT, optionalText, requiredText, z } from '../schema';
import { Mode } from '../account/api-keys.schema';
import { idPattern } from '../ids';
import { TRACKER_STATUSES } from './tables';

/** Request and response schemas of shipments (the API specification, 4.4: what buying with an EndShipper needs). */
export const MAX_WEIGHT = 100_000; // ounces
export const MAX_DIMENSION = 10_000; // inches

const addressLine = () => optionalText(MAX_TEXT);
export const ShipmentAddressInput = z
  .object(
    {
      name: addressLine(),
      company: addressLine(),
      street1: requiredText().openapi({ example: '1 Main St' }),
      street2: addressLine(),
      city: requiredText().openapi({ example: 'Boston' }),
      state: requiredText().openapi({ example: 'MA' }),
      zip: requiredText().refine((v) => normalizeZip(v) !== undefined, 'must be a 5-digit ZIP or ZIP+4').openapi({ example: '02110', pattern: ZIP.source }),
      country: optionalText()
        .refine((v) => v === undefined || v === null || v === '' || v.toUpperCase() === 'US', 'only US shipments are supported by the simulated carrier')
        .openapi({ description: 'Only `US` (the default).' }),
      phone: addressLine(),
      email: addressLine(),
    },
    { error: 'is required' },
  )
  .openapi('ShipmentAddressInput');

const measure = (max: number, message: string) =>
  z
    .union([z.number(), z.string()], { error: message })
    .transform((v, ctx) => {
      const n = typeof v === 'number' ? v : v.trim() === '' ? NaN : Number(v);
      if (!Number.isFinite(n) || n <= 0 || n > max) {
        ctx.addIssue({ code: 'custom', message: `${message} (at most ${max})` });
        return z.NEVER;
      }
      return n;
    })
    .openapi({ type: 'number', exclusiveMinimum: 0, maximum: max });

export const ParcelInput = z
  .object(
    {
      weight: measure(MAX_WEIGHT, 'is required: ounces, greater than zero').openapi({ example: 15 }),
      length: measure(MAX_DIMENSION, 'must be inches, greater than zero').optional(),
      width: measure(MAX_DIMENSION, 'must be inches, greater than zero').optional(),
      height: measure(MAX_DIMENSION, 'must be inches, greater than zero').optional(),
    },
    { error: 'is required' },
  )
  .refine((p) => [p.length, p.width, p.height].every((d) => d === undefined) || [p.length, p.width, p.height].every((d) => d !== undefined), {
    message: 'length, width and height are all required when one is given',
  })
  .openapi('ParcelInput');

export const ShipmentInput = z
  .object(
    {
      from_address: ShipmentAddressInput,
      to_address: ShipmentAddressInput,
      parcel: ParcelInput,
      options: freeFormObject('Shipment options, stored and returned as given.').nullish(),
      reference: optionalText().openapi({ example: 'order-42' }),
    },
    { error: 'must be an object' },
  )
  .openapi('ShipmentInput');

export const CreateShipmentBody = z.object({ shipment: ShipmentInput }).openapi({
  example: {
    shipment: {
      from_address: { street1: '1 Main St', city: 'Boston', state: 'MA', zip: '02110' },
      to_address: { street1: '388 Townsend St', city: 'San Francisco', state: 'CA', zip: '94107' },
      parcel: { weight: 15 },
    },
  },
});

export const SHIPMENT_INPUT: InputRules = {
  code: 'SHIPMENT.INVALID',
  message: 'Not enough information to create the shipment.',
  wrapper: 'shipment',
  fieldCodes: { parcel: 'PARCEL.PARAMETERS.INVALID', options: 'SHIPMENT.OPTIONS.INVALID', reference: 'SHIPMENT.INVALID_PARAMS' },
};

export const BuyBody = z
  .object(
    {
      // Ids of another shape are no rate of the shipment (422) and no EndShipper (404): the document says their shape.
      rate: z
        .object({ id: z.string().min(1).openapi({ pattern: idPattern('rate').source, description: 'One of the shipment\'s `rates`.' }) }, { error: 'cannot be blank: give {"rate": {"id": "rate_…"}}' })
        .openapi({ example: { id: 'rate_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' } }),
      end_shipper_id: z.string({ error: 'cannot be blank' }).min(1, 'cannot be blank').openapi({ pattern: idPattern('es').source, example: 'es_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' }),
      insurance: dollarAmount().nullish(),
    },
    { error: 'must be a JSON object' },
  )
  .openapi('BuyShipment');
export const BUY_INPUT: InputRules = { code: 'PARAMETER.REQUIRED', message: 'Missing required parameter.' };

// ---- responses ---------------------------------------------------------------------

const stamp = z.string().openapi({ format: 'date-time', example: '2026-01-31T12:00:00Z' });
const mode = Mode;

export const Address = z
  .strictObject({
    id: z.string(), object: z.literal('Address'), mode,
    name: z.string().nullable(), company: z.string().nullable(), street1: z.string(), street2: z.string().nullable(),
    city: z.string(), state: z.string(), zip: z.string(), country: z.string(), phone: z.string().nullable(), email: z.string().nullable(),
    created_at: stamp, updated_at: stamp,
  })
  .openapi('Address');

export const Parcel = z
  .strictObject({
    id: z.string(), object: z.literal('Parcel'), mode,
    length: z.number().nullable(), width: z.number().nullable(), height: z.number().nullable(),
    predefined_package: z.string().nullable(), weight: z.number(), created_at: stamp, updated_at: stamp,
  })
  .openapi('Parcel');

export const Rate = z
  .strictObject({
    id: z.string(), object: z.literal('Rate'), mode, carrier: z.string(), service: z.string(),
    rate: z.string(), currency: z.string(), list_rate: z.string(), list_currency: z.string(), retail_rate: z.string(), retail_currency: z.string(),
    delivery_days: z.number().int(), est_delivery_days: z.number().int(), delivery_date: z.string().nullable(), delivery_date_guaranteed: z.boolean(),
    carrier_account_id: z.string().nullable(), billing_type: z.string(), shipment_id: z.string(), created_at: stamp, updated_at: stamp,
  })
  .openapi('Rate');

export const PostageLabel = z
  .strictObject({
    id: z.string(), object: z.literal('PostageLabel'), label_url: z.string(), label_file_type: z.string(), label_size: z.string(),
    label_resolution: z.number().int(), label_date: stamp, created_at: stamp, updated_at: stamp,
  })
  .openapi('PostageLabel');

export const Fee = z
  .strictObject({ object: z.literal('Fee'), type: z.string(), amount: z.string(), charged: z.boolean(), refunded: z.boolean() })
  .openapi('Fee');

export const Tracker = z
  .strictObject({
    id: z.string(), object: z.literal('Tracker'), mode, tracking_code: z.string(),
    status: z.enum(TRACKER_STATUSES),
    status_detail: z.string(), carrier: z.string(), weight: z.number(), shipment_id: z.string(),
    est_delivery_date: z.string().nullable(), signed_by: z.string().nullable(), public_url: z.string().nullable(),
    tracking_details: z.array(z.unknown()), fees: z.array(z.unknown()), created_at: stamp, updated_at: stamp,
  })
  .openapi('Tracker');

export const Shipment = z
  .strictObject({
    id: z.string().openapi({ example: 'shp_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' }), object: z.literal('Shipment'),
    created_at: stamp, updated_at: stamp, mode, status: z.string(), tracking_code: z.string().nullable(), reference: z.string().nullable(),
    is_return: z.boolean(), messages: z.array(z.unknown()), options: z.record(z.string(), z.unknown()),
    batch_id: z.string().nullable(), batch_status: z.string().nullable(), batch_message: z.string().nullable(), customs_info: z.null(),
    from_address: Address, to_address: Address, return_address: Address, buyer_address: Address,
    insurance: z.string().nullable(), order_id: z.string().nullable(), parcel: Parcel, postage_label: z.union([PostageLabel, z.null()]),
    rates: z.array(Rate), selected_rate: z.union([Rate, z.null()]), refund_status: z.string().nullable(), scan_form: z.null(),
    tracker: z.union([Tracker, z.null()]), forms: z.array(z.unknown()), fees: z.array(Fee),
    usps_zone: z.number().int().openapi({ description: 'The carrier-specific zone (1–9) of the simulated carrier.' }),
  })
  .openapi('Shipment');
