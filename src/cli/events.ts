import { parseArgs } from 'node:util';
import type { Config } from '../config';
import { createDb } from '../db/database';
import { parseReplayFilter, replayMatching } from '../delivery/replay';
import { ApiError } from '../errors/api-error';
import { lazyTemporal } from '../temporal/client';
import { requireServices } from './require-env';

/** `shiphook events replay …`: the operator replay, from the shell; prints {replayed, event_ids}. */
export async function runEvents(baseConfig: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'replay') throw new Error('usage: shiphook events replay [--status S] [--user-id U] [--webhook-id H] [--since T] [--until T]');
  const { values } = parseArgs({
    args: rest,
    options: {
      status: { type: 'string' },
      'user-id': { type: 'string' },
      'webhook-id': { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
    },
  });
  const config = requireServices(baseConfig, { devFallback: true });
  const db = createDb(config.databaseUrl, 2);
  const temporal = lazyTemporal(config);
  try {
    const filter = parseReplayFilter({ status: values.status, user_id: values['user-id'], webhook_id: values['webhook-id'], since: values.since, until: values.until });
    process.stdout.write(JSON.stringify(await replayMatching({ config, db, temporal }, filter), null, 2) + '\n');
  } catch (err) {
    if (err instanceof ApiError) throw new Error(`${err.code}: ${err.message} ${JSON.stringify(err.errors)}`);
    throw err;
  } finally {
    await Promise.all([db.destroy(), temporal.close()]);
  }
}
