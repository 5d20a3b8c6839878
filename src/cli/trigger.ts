import { parseArgs } from 'node:util';
import type { Config } from '../config';
import { EVENT_TYPES, isEventType } from '../events/types';
import { apiClient, CLIENT_OPTIONS_USAGE } from './api-client';

const USAGE = `usage: shiphook trigger TYPE [--url URL] [--api-key KEY]

Publishes a test event of TYPE for the key's user, with the event catalogue's example
as its result, to every webhook and listener of the user in test mode that takes the
type (\`shiphook listen\` in another terminal gets it), and prints its id.
A production key is refused: live receivers never get invented events.

${CLIENT_OPTIONS_USAGE}

TYPE is one of:
${EVENT_TYPES.map((t) => `  ${t}`).join('\n')}`;

/** `shiphook trigger tracker.updated`: POST /v2/events/trigger; the event id on stdout, what became of it on stderr. */
export async function runTrigger(config: Config, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { url: { type: 'string' }, 'api-key': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) return void process.stdout.write(`${USAGE}\n`);
  const [type, ...extra] = positionals;
  if (!type || extra.length) throw new Error(`give one event type\n${USAGE}`);
  if (!isEventType(type)) throw new Error(`${type} is not an event type; one of: ${EVENT_TYPES.join(', ')}`);
  const api = apiClient(config, values);
  const event = await api.call<{ id: string; pending_urls: string[] }>('POST', '/events/trigger', { description: type });
  process.stdout.write(`${event.id}\n`);
  const to = event.pending_urls;
  process.stderr.write(to.length
    ? `Triggered ${type}: ${event.id}, on its way to ${to.length} receiver${to.length === 1 ? '' : 's'}: ${to.join(', ')}\n`
    : `Triggered ${type}: ${event.id}; no webhook or listener of this user in test mode takes ${type}, so it went nowhere.\n`);
}
