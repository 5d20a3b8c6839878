import type { Config } from '../config';
import { LaunchError } from '../launcher/launch-error';
import { findTemporalCli } from '../launcher/temporal';

/**
 * `shiphook provision` (run by `npm install`): fetches the `temporal` CLI into the
 * project when none is installed, so `npm start` needs no download. With
 * `--if-possible` a failure is a notice, not an error: `npm install` still succeeds
 * and `npm start` explains what is missing.
 */
export async function runProvision(config: Config, args: string[]): Promise<void> {
  // An external Temporal (or a production image) needs no dev server, so no CLI.
  if (config.temporalAddress || process.env.NODE_ENV === 'production') return;
  try {
    findTemporalCli(config.temporalCliPath);
  } catch (err) {
    if (!(err instanceof LaunchError) || !args.includes('--if-possible')) throw err;
    process.stderr.write(`shiphook: ${err.message}\n(npm start will need it)\n`);
  }
}
