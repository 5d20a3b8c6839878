import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('parent_id', 'text', (c) => c.references('users.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('phone_number', 'text')
    .addColumn('password_hash', 'text')
    .addColumn('verified', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('default_carbon_offset', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('has_elevate_access', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('referral_customer', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('end_shipper_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('balance', 'numeric(20, 10)', (c) => c.notNull().defaultTo('0'))
    .addColumn('price_per_shipment', 'numeric(20, 10)', (c) => c.notNull().defaultTo('0'))
    .addColumn('recharge_amount', 'numeric(20, 10)')
    .addColumn('secondary_recharge_amount', 'numeric(20, 10)')
    .addColumn('recharge_threshold', 'numeric(20, 10)')
    .addColumn('has_billing_method', 'boolean')
    .addColumn('cc_fee_rate', 'numeric(20, 10)', (c) => c.notNull().defaultTo('0.0375'))
    .addColumn('default_insurance_amount', 'numeric(20, 10)')
    .addColumn('insurance_fee_rate', 'numeric(20, 10)', (c) => c.notNull().defaultTo('0.005'))
    .addColumn('insurance_fee_minimum', 'numeric(20, 10)', (c) => c.notNull().defaultTo('0.5'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('deleted_at', 'timestamptz')
    .execute();
  // Emails identify parent accounts; children have none.
  await sql`create unique index users_email_key on users (lower(email)) where deleted_at is null`.execute(db);
  await db.schema.createIndex('users_parent_id_idx').on('users').columns(['parent_id', 'id']).execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test', 'production')`))
    // The key is shown again by GET /api_keys (as the real API does), so it is kept;
    // authentication looks keys up by this SHA-256 digest only.
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('key_digest', 'bytea', (c) => c.notNull().unique())
    .addColumn('active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('deleted_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('api_keys_user_id_idx').on('api_keys').columns(['user_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('api_keys').execute();
  await db.schema.dropTable('users').execute();
}
