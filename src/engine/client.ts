import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import { clientTracing } from './tracing';

/**
 * One Temporal client per process, connected on first use. The module, a large one
 * (docs/performance.md), loads then too: the api needs Temporal only for replays and
 * test trackers.
 */
export async function connectTemporal(config: Config): Promise<Client> {
  if (!config.temporalAddress) throw new Error('TEMPORAL_ADDRESS is not set');
  const { Client, Connection } = await import('@temporalio/client');
  const connection = await Connection.connect({ address: config.temporalAddress, connectTimeout: '3s' });
  return new Client({ connection, namespace: config.temporalNamespace, interceptors: await clientTracing() });
}

export type TemporalClientSource = () => Promise<Client>;

/** What code outside a worker needs to start workflows (replays, test trackers): the configuration and a client. */
export interface TemporalDeps {
  config: Config;
  temporal: TemporalClientSource;
}

/**
 * A client that connects on first use and tries again on the next call after a
 * failure, so the API starts (and keeps accepting events) while Temporal is down.
 */
export function lazyTemporal(config: Config): TemporalClientSource & { close(): Promise<void> } {
  let pending: Promise<Client> | undefined;
  const get = () => {
    pending ??= connectTemporal(config).catch((err) => {
      pending = undefined;
      throw err;
    });
    return pending;
  };
  return Object.assign(get, {
    async close() {
      const client = await pending?.catch(() => undefined);
      await client?.connection.close();
    },
  });
}
