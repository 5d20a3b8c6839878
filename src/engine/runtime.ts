import type { LogLevel } from '@temporalio/common';
import { DefaultLogger, type LogEntry, Runtime } from '@temporalio/worker';
import type { Config } from '../config';
import { ephemeralPort } from '../net';
import { log } from '../log';
import { deliverEvent } from '../../workflows/deliver-event';

const LEVEL = { TRACE: 'debug', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

/**
 * The Temporal SDK's runtime of a worker process, installed before anything connects:
 * - its logs, and those of its native core, go to shiphook's logger (JSON lines,
 *   redacted, one stream) instead of raw `[WARN] …` lines on stderr; from WARN up,
 *   or INFO/DEBUG with LOG_LEVEL=debug;
 * - its Prometheus exporter (task slots, poll and task latencies, …) listens on a
 *   free loopback port; the worker's own `/metrics` appends what it serves, so one
 *   scrape gets both.
 * Returns the exporter's URL.
 */
export async function installTemporalRuntime(config: Config): Promise<string> {
  const port = await ephemeralPort(); // bound by the SDK's runtime below, in this process
  const debug = config.logLevel === 'debug';
  Runtime.install({
    logger: temporalLogger(debug ? 'DEBUG' : 'WARN'),
    telemetryOptions: {
      logging: { filter: { core: debug ? 'INFO' : 'WARN', other: 'ERROR' }, forward: {} },
      metrics: {
        prometheus: { bindAddress: `127.0.0.1:${port}`, countersTotalSuffix: true, unitSuffix: true, useSecondsForDurations: true },
      },
    },
  });
  return `http://127.0.0.1:${port}/metrics`;
}

/** A Temporal SDK logger that writes shiphook's log lines (also for the workflow bundler). */
export const temporalLogger = (level: LogLevel) => new DefaultLogger(level, forward);

/**
 * The SDK (1.24) warns this whenever a Worker is given activities only, which is how the
 * `retries` role is meant to run (it has no option to say so): nothing for an operator to do.
 */
const ACTIVITIES_ONLY_NOTICE = 'No workflows registered, not polling for workflow tasks';

/** One SDK log entry as a shiphook log line; a delivery workflow's id is its event's id. */
function forward(entry: LogEntry): void {
  const meta: Record<string, unknown> = { source: 'temporal', ...entry.meta };
  delete meta.taskToken; // a capability to complete the activity: not for logs
  if (meta.workflowType === deliverEvent.name && typeof meta.workflowId === 'string') meta.event_id = meta.workflowId;
  const level = entry.message === ACTIVITIES_ONLY_NOTICE ? 'debug' : LEVEL[entry.level];
  log[level](entry.message, meta);
}
