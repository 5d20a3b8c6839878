import { type Kysely, sql } from 'kysely';

const mode = (c: any) => c.notNull().check(sql`mode in ('test', 'production')`);

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('end_shippers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('mode', 'text', mode)
    .addColumn('name', 'text')
    .addColumn('company', 'text')
    .addColumn('street1', 'text', (c) => c.notNull())
    .addColumn('street2', 'text')
    .addColumn('city', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('zip', 'text', (c) => c.notNull())
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('end_shippers_user_mode_idx').on('end_shippers').columns(['user_id', 'mode', 'id']).execute();

  await db.schema
    .createTable('shipments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('mode', 'text', mode)
    .addColumn('reference', 'text')
    .addColumn('from_address', 'jsonb', (c) => c.notNull())
    .addColumn('to_address', 'jsonb', (c) => c.notNull())
    .addColumn('parcel', 'jsonb', (c) => c.notNull())
    .addColumn('options', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('rates', 'jsonb', (c) => c.notNull())
    .addColumn('usps_zone', 'integer', (c) => c.notNull())
    // Set once, by the purchase:
    .addColumn('end_shipper_id', 'text', (c) => c.references('end_shippers.id'))
    .addColumn('selected_rate', 'jsonb')
    .addColumn('tracking_code', 'text')
    .addColumn('postage_label', 'jsonb')
    .addColumn('fees', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('insurance', 'text')
    .addColumn('tracker_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('shipments_user_mode_idx').on('shipments').columns(['user_id', 'mode', 'id']).execute();

  await db.schema
    .createTable('trackers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('mode', 'text', mode)
    .addColumn('shipment_id', 'text', (c) => c.notNull().references('shipments.id'))
    .addColumn('tracking_code', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('weight', 'double precision', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('trackers').execute();
  await db.schema.dropTable('shipments').execute();
  await db.schema.dropTable('end_shippers').execute();
}
