import { spawnSync } from 'node:child_process';

/** Where the shell finds `name` on PATH, or undefined. */
export function onPath(name: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return found.status === 0 && found.stdout.trim() ? found.stdout.trim() : undefined;
}
