import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedSystem, type IsolatedSystem } from '../support/isolated';
import { eventually } from '../support/receiver';

let iso: IsolatedSystem;

beforeAll(async () => {
  iso = await isolatedSystem();
});
afterAll(async () => {
  await iso.close();
});

describe('shiphook worker logs', () => {
  it("a retries worker's start says nothing at warn: the SDK's activities-only notice is a debug line", async () => {
    const worker = await iso.workerProcess({ role: 'retries' }); // at debug level (test/support/isolated.ts)
    const lines = () => worker.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    const notice = await eventually(async () => lines().find((l) => /No workflows registered/.test(String(l.msg))), 20_000, "the SDK's notice");
    expect(notice.level).toBe('debug');
    expect(lines().find((l) => l.msg === 'worker running')).toMatchObject({ level: 'info', role: 'retries', task_queue: iso.taskQueue });
    expect(lines().filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
  });
});
