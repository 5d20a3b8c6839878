import { type Kysely, sql } from 'kysely';

/**
 * Every change to a user or an API key NOTIFYs `shiphook_auth` with the user's id,
 * so API processes drop what they cached about that user's authentication (a
 * disabled key stops working at once). A trigger, so no code path can forget it:
 * key disable/enable/delete, user updates, balance debits, deletions.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function shiphook_auth_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('shiphook_auth', to_jsonb(old) ->> tg_argv[0]);
      return null;
    end $$`.execute(db);
  await sql`create trigger users_auth_changed after update or delete on users for each row execute function shiphook_auth_changed('id')`.execute(db);
  await sql`create trigger api_keys_auth_changed after update or delete on api_keys for each row execute function shiphook_auth_changed('user_id')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger api_keys_auth_changed on api_keys`.execute(db);
  await sql`drop trigger users_auth_changed on users`.execute(db);
  await sql`drop function shiphook_auth_changed()`.execute(db);
}
