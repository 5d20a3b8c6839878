import cluster from 'node:cluster';
import { AggregatorRegistry, collectDefaultMetrics, register } from 'prom-client';

/**
 * The Prometheus text of this process (prom-client's default registry, with the
 * default Node process metrics). In an api cluster (SHIPHOOK_API_PROCESSES > 1) a
 * scrape lands on one api process at random, so that process asks the primary for
 * the sum over all of them (prom-client's AggregatorRegistry).
 */
export const METRICS_CONTENT_TYPE = register.contentType;

const ASK = 'shiphook:metrics?';
const ANSWER = 'shiphook:metrics';
const ASK_TIMEOUT_MS = 5000;

let started = false;

/** Starts the default process metrics (once) and, in a cluster process, answers the primary's collection. */
export function startProcessMetrics(): void {
  if (started) return;
  started = true;
  collectDefaultMetrics();
  if (cluster.isWorker) new AggregatorRegistry(); // its construction installs the answering listener
}

export async function metricsText(): Promise<string> {
  return cluster.isWorker ? askPrimary() : register.metrics();
}

/** In the primary of an api cluster: gathers every api process's metrics on request. */
export function aggregateClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: { type?: string; id?: number }) => {
    if (message?.type !== ASK) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: ANSWER, id: message.id, text }),
      (err: Error) => worker.send({ type: ANSWER, id: message.id, error: err.message }),
    );
  });
}

let asked = 0;
function askPrimary(): Promise<string> {
  const id = ++asked;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error('the api primary did not answer with metrics')), ASK_TIMEOUT_MS);
    const onMessage = (m: { type?: string; id?: number; text?: string; error?: string }) => {
      if (m?.type === ANSWER && m.id === id) finish(m.error ? new Error(m.error) : undefined, m.text);
    };
    function finish(err?: Error, text?: string) {
      clearTimeout(timer);
      process.off('message', onMessage);
      if (err) reject(err);
      else resolve(text ?? '');
    }
    process.on('message', onMessage);
    process.send!({ type: ASK, id });
  });
}
