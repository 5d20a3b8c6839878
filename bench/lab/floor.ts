import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { pool, waitUntil } from '../client';
import { cpuSeconds, round } from '../processes';
import type { BenchSystem } from '../system';
import type { LabScenario } from './index';

const TASK_QUEUE = 'shiphook-bench-floor';

/**
 * Floor: N no-op workflows (start, one workflow task, complete) on the same Temporal
 * server, started 32 at a time, with the worker in this process. One workflow per event
 * can go no faster than this on this machine; the burst, when it ran, is reported as a
 * fraction of it.
 */
export const floor: LabScenario = {
  about: 'no-op workflows on the same Temporal server (--events): what the server allows per workflow',
  async run(sys, ctx) {
    const result = await noopWorkflows(sys, ctx.number('events', ctx.quick ? 200 : 2000), ctx.quick ? 60_000 : 240_000);
    const burstRate = ctx.results.burst?.events_per_second_end_to_end;
    return { ...result, engine_to_floor: typeof burstRate === 'number' ? round(burstRate / result.workflows_per_second, 2) : 'run with the burst to compare' };
  },
};

async function noopWorkflows(sys: BenchSystem, n: number, waitMs: number) {
  // The worker runs in this process: its SDK logs only from WARN up.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address: sys.temporalAddress });
  let finished = 0;
  const worker = await Worker.create({
    connection,
    taskQueue: TASK_QUEUE,
    workflowsPath: fileURLToPath(new URL('./floor-workflow.ts', import.meta.url)),
    sinks: { floor: { finished: { fn: () => void finished++, callDuringReplay: false } } },
  });
  const running = worker.run();
  try {
    const client = new Client({ connection });
    const temporalPid = sys.processes().temporal;
    const cpu = () => ({ temporal: temporalPid ? cpuSeconds(temporalPid) : 0, bench: cpuSeconds(process.pid) });
    const before = cpu();
    const t0 = performance.now();
    const run = `${Date.now()}`;
    await pool(n, 32, async (i) => {
      await client.workflow.start('floorNoop', { taskQueue: TASK_QUEUE, workflowId: `bench-floor-${run}-${i}` });
    });
    const done = await waitUntil(() => finished >= n, waitMs);
    const seconds = (performance.now() - t0) / 1000;
    const after = cpu();
    return {
      workflows: n,
      all_finished: done,
      workflows_per_second: round(finished / seconds),
      cpu_ms_per_workflow: {
        temporal: round(((after.temporal - before.temporal) * 1000) / n, 2),
        starter_and_worker: round(((after.bench - before.bench) * 1000) / n, 2),
      },
    };
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
  }
}
