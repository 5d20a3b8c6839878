import type { Config } from '../config';
import { readDevState } from './dev-state';

/**
 * Production processes never start embedded services: they need DATABASE_URL and
 * TEMPORAL_ADDRESS. Operator commands also find a running `shiphook dev` through
 * its state file, so `shiphook admin …` works beside `npm start`.
 */
export function requireServices(config: Config, { devFallback = false } = {}): Required<Pick<Config, 'databaseUrl' | 'temporalAddress'>> & Config {
  const dev = devFallback ? readDevState(config.dataDir) : undefined;
  const databaseUrl = config.databaseUrl ?? dev?.databaseUrl;
  const temporalAddress = config.temporalAddress ?? dev?.temporalAddress;
  const missing = [!databaseUrl && 'DATABASE_URL', !temporalAddress && 'TEMPORAL_ADDRESS'].filter(Boolean);
  if (missing.length) throw new Error(`${missing.join(' and ')} must be set (use \`shiphook dev\` for embedded services)`);
  return { ...config, databaseUrl: databaseUrl!, temporalAddress: temporalAddress! };
}
