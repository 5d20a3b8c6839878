/**
 * A process started by a launcher (`shiphook dev`, the tests, the bench) has an IPC
 * channel to it and its own process group, so a Ctrl-C reaches only the launcher.
 * If the launcher dies without stopping it, the channel closes: stop as if told to.
 */
export function stopWithLauncher(): void {
  if (process.send) process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
}

/** Tells the launcher this process serves now (api: listening; worker: polling). */
export function reportReady(details: Record<string, unknown> = {}): void {
  process.send?.({ ready: true, ...details });
}
