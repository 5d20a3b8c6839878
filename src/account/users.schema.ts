import { ApiKey } from './api-keys.schema';
import { documented, dollarAmount, EMAIL, type InputRules, MAX_TEXT, optionalText, requiredText, trimmedPattern, z } from '../schema';

/** Request and response schemas of users (the API specification, 2.6 and 4.5) and of the operator's account creation. */
export const MIN_PASSWORD = 8;
export const MAX_PASSWORD = 256;

/** `example`: none where the address must be new (an account's): a client would send the example, which is taken. */
const email = (example?: string) =>
  requiredText(MAX_TEXT, 'cannot be blank')
    .refine((v) => EMAIL.test(v), 'must be an email address')
    .openapi({ pattern: trimmedPattern(EMAIL), example });
const password = () =>
  z
    .string({ error: 'must be a string' })
    .min(MIN_PASSWORD, `must be at least ${MIN_PASSWORD} characters`)
    .max(MAX_PASSWORD, `must be at most ${MAX_PASSWORD} characters`)
    .refine((v) => !v.includes('\u0000'), 'must not contain NUL characters');
const flag = () => z.boolean({ error: 'must be true or false' });
const nullableDollars = () => z.union([dollarAmount(), z.literal(''), z.null()]).optional();

export const UserUpdate = z
  .object(
    {
      name: requiredText(MAX_TEXT, 'cannot be blank').optional().openapi({ example: 'Jack Sparrow' }),
      phone_number: optionalText().openapi({ example: '415-555-0100' }),
      default_carbon_offset: flag().optional(),
      recharge_amount: nullableDollars(),
      secondary_recharge_amount: nullableDollars(),
      recharge_threshold: nullableDollars(),
      default_insurance_amount: nullableDollars(),
      email: email().optional(),
      password: password().optional(),
      current_password: z.string({ error: 'must be a string' }).max(MAX_PASSWORD).optional().openapi({ description: 'Required to change `email` or `password`.' }),
    },
    { error: 'must be an object' },
  )
  .openapi('UserUpdate', {
    // The rule users.ts applies (and the one it cannot state here: that it is the right password).
    ...documented({ dependentRequired: { email: ['current_password'], password: ['current_password'] } }), description: 'Partial: only passed attributes change. A child (or a parent editing a child) changes only `name`; other attributes are ignored. `""` or `null` clears a dollar amount.' });

/** What a child may change: its name; everything else is ignored. */
export const ChildUpdate = z.object({ name: UserUpdate.shape.name }, { error: 'must be an object' });

export const UpdateUserBody = z.object({ user: UserUpdate }).openapi({ example: { user: { name: 'Jack Sparrow', phone_number: '415-555-0100' } } });
export const UpdateChildBody = z.object({ user: ChildUpdate });

export const NewChild = z
  .object({ name: requiredText(MAX_TEXT, 'cannot be blank').openapi({ example: 'Child Account' }), phone_number: optionalText() }, { error: 'must be an object' })
  .openapi('NewChildUser');
export const CreateChildBody = z.object({ user: NewChild }).openapi({ example: { user: { name: 'Child Account' } } });

export const NewParentUser = z
  .object(
    {
      name: requiredText(MAX_TEXT, 'cannot be blank').openapi({ example: 'Jack Sparrow' }),
      email: email(),
      phone_number: optionalText(),
      password: password().nullish(),
      referral_customer: flag().optional(),
      end_shipper_enabled: flag().optional(),
      balance: dollarAmount().optional(),
    },
    { error: 'must be a JSON object' },
  )
  .openapi('NewParentUser', { example: { name: 'Jack Sparrow', email: 'jack@example.com', referral_customer: true, end_shipper_enabled: true, balance: '100.00' } });

/** The operator's change of a parent's credentials: no current password asked (the account may have none). */
export const OperatorUserUpdate = z
  .object({ email: email().optional(), password: password().optional() }, { error: 'must be a JSON object' })
  .openapi('OperatorUserUpdate', { example: { email: 'jack@example.com', password: 'a long new password' } });

export const USER_UPDATE_INPUT: InputRules = { code: 'USER.INVALID', message: 'The user could not be updated.', wrapper: 'user' };
export const USER_CREATE_INPUT: InputRules = { code: 'USER.INVALID', message: 'The user could not be created.', wrapper: 'user' };
export const PARENT_CREATE_INPUT: InputRules = { code: 'USER.INVALID', message: 'The user could not be created.' };
export const OPERATOR_UPDATE_INPUT: InputRules = { code: 'USER.INVALID', message: 'The user could not be updated.' };

const stamp = (example: string) => z.string().openapi({ format: 'date-time', example });
const money = (example: string) => z.string().openapi({ example, description: 'US dollars.' });

const childFields = {
  id: z.string().openapi({ example: 'user_0192f3a4b5c67d8e9f0a1b2c3d4e5f60' }),
  object: z.literal('User'),
  parent_id: z.string().nullable(),
  name: z.string(),
  phone_number: z.string().nullable(),
  verified: z.boolean(),
  created_at: stamp('2026-01-31T12:00:00Z'),
  default_carbon_offset: z.boolean(),
  has_elevate_access: z.boolean(),
};

export const ChildUser = z.strictObject({ ...childFields, children: z.array(z.unknown()).max(0).openapi({ description: 'Always empty for a child.', maxItems: 0 }) }).openapi('ChildUser');

export const ParentUser = z
  .strictObject({
    ...childFields,
    balance: money('100.00000'),
    price_per_shipment: money('0.00000'),
    recharge_amount: money('50.00000').nullable(),
    secondary_recharge_amount: money('50.00000').nullable(),
    recharge_threshold: money('10.00000').nullable(),
    has_billing_method: z.boolean().nullable(),
    cc_fee_rate: z.string().openapi({ example: '0.0375' }),
    default_insurance_amount: money('50.00000').nullable(),
    insurance_fee_rate: z.string().openapi({ example: '0.005' }),
    insurance_fee_minimum: money('0.50000'),
    email: z.string(),
    children: z.array(ChildUser),
  })
  .openapi('User');

export const AnyUser = z.union([ParentUser, ChildUser]).openapi('AnyUser', { description: 'A parent User, or a child (no billing fields, no email).' });

export const CreatedChild = z.strictObject({ ...ChildUser.shape, api_keys: z.array(ApiKey) }).openapi('CreatedChildUser');
export const CreatedParent = z.strictObject({ user: ParentUser, api_keys: z.array(ApiKey) }).openapi('CreatedUser');
export const ChildList = z.strictObject({ children: z.array(ChildUser), has_more: z.boolean() }).openapi('ChildUserList');
