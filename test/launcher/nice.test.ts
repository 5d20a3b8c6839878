import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { afterEach, expect, it } from 'vitest';
import { setNice } from '../../src/launcher/child';

// This process's own session, read before any test ran: empty where it is the boot
// session's group, which is no autogroup of its own (a CI runner that never started a
// session), so the tests compare with it rather than presume `nice 0`.
const ownSession = existsSync('/proc/self/autogroup') ? readFileSync('/proc/self/autogroup', 'utf8') : '';

// A child leads its own session, as the launcher starts api and workers (`detached`).
const children: number[] = [];
afterEach(() => {
  for (const pid of children.splice(0)) process.kill(pid, 'SIGKILL');
});

function sessionLeader(): number {
  const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
  children.push(child.pid!);
  return child.pid!;
}

it('lowers the priority of a child in its own session', () => {
  const pid = sessionLeader();
  setNice(pid, 10);
  expect(os.getPriority(pid)).toBe(10);
});

// Where the kernel groups tasks by session, a nice value alone weighs a task only against
// its own session: the retries worker would compete with the api and the deliveries worker
// as an equal (measured: two niced and two normal spinners, each in its own session, split
// two cores evenly).
it.runIf(existsSync('/proc/self/autogroup'))('lowers the weight of its session too, against the other sessions', () => {
  const pid = sessionLeader();
  expect(readFileSync(`/proc/${pid}/autogroup`, 'utf8')).toMatch(/ nice 0\n$/);
  setNice(pid, 10);
  expect(readFileSync(`/proc/${pid}/autogroup`, 'utf8')).toMatch(/ nice 10\n$/);
  // and not the launcher's own session
  expect(readFileSync('/proc/self/autogroup', 'utf8')).toBe(ownSession);
});
