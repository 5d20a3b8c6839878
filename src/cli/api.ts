import { once } from 'node:events';
import { createApp } from '../api/app';
import type { Config } from '../config';
import { createDb } from '../db/database';
import { lazyTemporal } from '../temporal/client';
import { log } from '../log';
import { requireServices } from './require-env';

export async function runApi(baseConfig: Config): Promise<void> {
  const config = requireServices(baseConfig);
  const db = createDb(config.databaseUrl);
  const temporal = lazyTemporal(config);
  const app = createApp({ config, db, temporal });
  const server = app.listen(config.port, config.host);
  await once(server, 'listening');
  log.info('api listening', { url: `http://${config.host}:${config.port}/v2` });
  const stop = () => {
    server.close(() => void Promise.all([db.destroy(), temporal.close()]).then(() => process.exit(0)));
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
