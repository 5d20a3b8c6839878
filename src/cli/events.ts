import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { Config } from '../config';
import { createDb } from '../db/database';
import { replayProgress, startReplay } from '../engine/replay';
import { BULK_REPLAY_INPUT, BulkReplayBody } from '../engine/replay.schema';
import { ApiError } from '../errors/api-error';
import { parseInput } from '../schema';
import { requireServices } from './require-env';

const PROGRESS_EVERY_MS = 2000;

/**
 * `shiphook events replay …`: the operator replay, from the shell. The workers'
 * dispatchers carry it out; this waits until they started every matched event
 * (progress on stderr) and prints the replay's final state, or with `--detach`
 * prints its handle at once (follow it with GET /admin/v1/replays/:id).
 */
export async function runEvents(baseConfig: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'replay') throw new Error('usage: shiphook events replay [--status S] [--user-id U] [--webhook-id H] [--since T] [--until T] [--dispatch-failed] [--detach]');
  const { values } = parseArgs({
    args: rest,
    options: {
      status: { type: 'string' },
      'user-id': { type: 'string' },
      'webhook-id': { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      'dispatch-failed': { type: 'boolean' },
      detach: { type: 'boolean' },
    },
  });
  const config = requireServices(baseConfig, { devFallback: true });
  const db = createDb(config.databaseUrl, 2);
  try {
    const filter = parseInput(BulkReplayBody, {
      status: values.status, user_id: values['user-id'], webhook_id: values['webhook-id'], since: values.since, until: values.until,
      dispatch_failed: values['dispatch-failed'] || undefined,
    }, BULK_REPLAY_INPUT);
    let progress = await startReplay(db, filter);
    while (!values.detach && progress.status === 'running') {
      process.stderr.write(`replay ${progress.id}: ${progress.started}/${progress.matched} started\n`);
      await sleep(PROGRESS_EVERY_MS);
      progress = (await replayProgress(db, progress.id)) ?? progress;
    }
    process.stdout.write(JSON.stringify(progress, null, 2) + '\n');
  } catch (err) {
    if (err instanceof ApiError) throw new Error(`${err.code}: ${err.message} ${JSON.stringify(err.errors)}`);
    throw err;
  } finally {
    await db.destroy();
  }
}
