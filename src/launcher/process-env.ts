/**
 * Environment for the shiphook processes the launchers start (dev, tests, bench).
 * glibc gives each thread that allocates its own malloc arena; the worker's Rust
 * core and Node's threads fragment them, and RSS grows by ~80 MB in a burst for
 * nothing. Two arenas: worker peak 400 → 348 MB, same throughput (bench/, burst).
 * Containers get it from the Dockerfile; set it yourself elsewhere. Applied only
 * where the environment does not say otherwise.
 */
export function shiphookProcessEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { MALLOC_ARENA_MAX: '2', ...env };
}
