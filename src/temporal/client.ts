import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config';

/** One Temporal client per process, connected on first use. */
export async function connectTemporal(config: Config): Promise<Client> {
  if (!config.temporalAddress) throw new Error('TEMPORAL_ADDRESS is not set');
  const connection = await Connection.connect({ address: config.temporalAddress });
  return new Client({ connection, namespace: config.temporalNamespace });
}
