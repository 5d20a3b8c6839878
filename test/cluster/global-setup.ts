import { temporalServerBinaries } from './temporal-server/binaries';

/**
 * Before any test of `npm run test:cluster`: the Temporal server's binaries, from
 * TEMPORAL_SERVER_PATH or the tool cache, built there now on a first run (a long while, which
 * the build announces and then counts on stderr) — outside the hooks' timeouts, which are for
 * starting the topology.
 */
export default async function setup(): Promise<void> {
  await temporalServerBinaries();
}
