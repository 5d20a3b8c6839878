import { parseArgs } from 'node:util';
import type { Config } from '../config';
import { createDb } from '../db/database';
import { createParentUser } from '../account/user-creation';
import { NewParentUser, PARENT_CREATE_INPUT } from '../account/users.schema';
import { parseInput } from '../schema';
import { ApiError } from '../errors/api-error';
import { readDevState } from './dev-state';

const USAGE = `shiphook admin create-user --name N --email E [--phone P] [--password-stdin] [--referral-customer] [--end-shipper]   (password: first line of stdin, or SHIPHOOK_NEW_USER_PASSWORD)
       shiphook admin retention --now   (runs the retention schedule at once and prints what it removed)`;

/** `shiphook admin create-user …`: the operator API's user creation, from the shell; `admin retention --now`. */
export async function runAdmin(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'retention' && rest.length === 1 && rest[0] === '--now') return runRetention(config);
  if (sub !== 'create-user') throw new Error(`usage: ${USAGE}`);
  if (rest.some((a) => a === '--password' || a.startsWith('--password='))) {
    throw new Error('a password is never read from the command line (other users see it in `ps`, the shell keeps it in its history): use --password-stdin or SHIPHOOK_NEW_USER_PASSWORD');
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      email: { type: 'string' },
      phone: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      'referral-customer': { type: 'boolean' },
      'end-shipper': { type: 'boolean' },
    },
  });
  const url = config.databaseUrl ?? readDevState(config.dataDir)?.databaseUrl;
  if (!url) throw new Error('DATABASE_URL must be set (or run `shiphook dev` first)');
  const db = createDb(url, 1);
  try {
    const input = {
      name: values.name,
      email: values.email,
      phone_number: values.phone,
      password: values['password-stdin'] ? await firstLineOfStdin() : process.env.SHIPHOOK_NEW_USER_PASSWORD || undefined,
      referral_customer: values['referral-customer'] ?? false,
      end_shipper_enabled: values['end-shipper'] ?? false,
    };
    const result = await createParentUser(db, parseInput(NewParentUser, input, PARENT_CREATE_INPUT));
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  } catch (err) {
    if (err instanceof ApiError) throw new Error(`${err.code}: ${err.message} ${JSON.stringify(err.errors)}`);
    throw err;
  } finally {
    await db.destroy();
  }
}

/** Triggers the retention Schedule, waits for its run and prints what it removed (JSON). */
async function runRetention(config: Config): Promise<void> {
  const temporalAddress = config.temporalAddress ?? readDevState(config.dataDir)?.temporalAddress;
  if (!temporalAddress) throw new Error('TEMPORAL_ADDRESS must be set (or run `shiphook dev` first)');
  const { connectTemporal } = await import('../engine/client');
  const { runRetentionNow } = await import('../engine/retention-schedule');
  const client = await connectTemporal({ ...config, temporalAddress });
  try {
    process.stdout.write(JSON.stringify(await runRetentionNow(client, config), null, 2) + '\n');
  } finally {
    await client.connection.close();
  }
}

async function firstLineOfStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0]!;
}
