/**
 * Environment for the shiphook processes the launchers start (dev, tests, bench);
 * the Dockerfile sets the same for containers. Values already in the environment win.
 *
 * - MALLOC_ARENA_MAX=2: glibc gives each allocating thread its own malloc arena; the
 *   worker's Rust core and Node's threads fragment them, and resident memory grows.
 * - --max-old-space-size=384: without it V8 sizes heaps from the machine's memory
 *   (GBs) and collects lazily; this bounds both the main and the workflow thread. Each
 *   cached workflow run takes heap, so a worker with thousands of task slots needs more,
 *   and so do events with very large `result`s.
 * What each bought: docs/performance.md.
 */
export const HEAP_LIMIT_MB = 384;
/**
 * --max-semi-space-size=4: V8's young generation grows to two 16 MB semi-spaces per isolate
 * (the api's, the worker's and its workflow thread's) and stays there; most of what a request
 * or an activation allocates dies young at 4 MB as well (docs/performance.md).
 */
export const SEMI_SPACE_MB = 4;

/**
 * Node flags of every shiphook process (api and worker), on its command line: Node
 * refuses them in NODE_OPTIONS, and V8 aborts when they are set once the process runs.
 * The image's ENTRYPOINT carries the same.
 *
 * - --single-threaded-gc: V8 collects garbage on the thread that allocates, instead of
 *   sharing each pause with helper threads and marking and sweeping on background
 *   threads (four per process by default). Where the cores are shared with other busy
 *   processes (api and worker beside Temporal and PostgreSQL, a small pod), those
 *   threads compete with the rest of the system for the cores, and a pause can wait for
 *   a helper that is not running: the healthy p99 with a failing endpoint gained, at about
 *   the same CPU (docs/performance.md). On a host whose
 *   cores a process has to itself, parallel collection shortens pauses instead: start it
 *   without the flag.
 * - --no-flush-bytecode, --no-memory-reducer: keep compiled code and heap sizes through
 *   quiet minutes. By default V8 collects an idle process's heap to shrink it (the
 *   memory reducer) and drops the bytecode of functions not run for five collections;
 *   webhook traffic comes in bursts, and the first events after a pause were slower.
 *   With both, the bench's window after four idle minutes had a lower p99 (which flag
 *   does it was not separated). The cost is the memory an idle process would have given
 *   back; the heap stays bounded by HEAP_LIMIT_MB. Figures in docs/performance.md.
 *   `npm run bench` (package.json) passes these two to its own process as well, so its
 *   receivers measure after idle minutes as they did when the flags were measured.
 */
export const NODE_FLAGS: readonly string[] = ['--single-threaded-gc', '--no-flush-bytecode', '--no-memory-reducer'];

export function shiphookProcessEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const nodeOptions = env.NODE_OPTIONS ?? '';
  return {
    MALLOC_ARENA_MAX: '2',
    ...env,
    NODE_OPTIONS: [
      nodeOptions,
      nodeOptions.includes('--max-old-space-size') ? '' : `--max-old-space-size=${HEAP_LIMIT_MB}`,
      nodeOptions.includes('--max-semi-space-size') ? '' : `--max-semi-space-size=${SEMI_SPACE_MB}`,
    ].filter(Boolean).join(' '),
  };
}
