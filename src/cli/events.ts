import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { Config } from '../config';
import { createDb } from '../db/database';
import { replayProgress, startReplay } from '../engine/replay';
import { BULK_REPLAY_INPUT, BulkReplayBody } from '../engine/replay.schema';
import { ApiError } from '../errors/api-error';
import { parseInput } from '../schema';
import { requireServices } from './require-env';
import { apiClient, CLIENT_OPTIONS_USAGE } from './api-client';

const PROGRESS_EVERY_MS = 2000;

const USAGE = `usage: shiphook events resend EVENT_ID [--webhook ID] [--url URL] [--api-key KEY]
       shiphook events replay [--status S] [--user-id U] [--webhook-id H] [--since T] [--until T] [--dispatch-failed] [--detach]

  resend   delivers one event again, also one delivered already, to every webhook and listener
           that takes its type now, or with --webhook to that one (hook_… or lst_…); through the
           API with an API key (POST /v2/events/:id/replay), so also against a remote server.
${CLIENT_OPTIONS_USAGE}
  replay   the operator's broad replay, on the database (DATABASE_URL, or the running \`npm start\`)`;

/** `shiphook events resend …` (a developer's, through the API) and `shiphook events replay …` (an operator's). */
export async function runEvents(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'resend') return runResend(config, rest);
  if (sub === 'replay') return runReplay(config, rest);
  if (sub === '--help' || sub === '-h') return void process.stdout.write(`${USAGE}\n`);
  throw new Error(USAGE);
}

/** `shiphook events resend evt_… [--webhook hook_…]`: prints the event as the replay left it (to whom it goes). */
async function runResend(config: Config, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { webhook: { type: 'string' }, url: { type: 'string' }, 'api-key': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) return void process.stdout.write(`${USAGE}\n`);
  const [eventId, ...extra] = positionals;
  if (!eventId || extra.length) throw new Error(`give one event id\n${USAGE}`);
  const api = apiClient(config, values);
  const event = await api.call<{ id: string; status: string; pending_urls: string[] }>('POST', `/events/${encodeURIComponent(eventId)}/replay`, values.webhook ? { webhook_id: values.webhook } : { all: true });
  process.stdout.write(`${event.id}\n`);
  process.stderr.write(`Resending ${event.id} to ${event.pending_urls.join(', ')}\n`);
}

/**
 * `shiphook events replay …`: the operator replay, from the shell. The workers'
 * dispatchers carry it out; this waits until they started every matched event
 * (progress on stderr) and prints the replay's final state, or with `--detach`
 * prints its handle at once (follow it with GET /admin/v1/replays/:id).
 */
async function runReplay(baseConfig: Config, rest: string[]): Promise<void> {
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
