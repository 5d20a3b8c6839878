import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { log, logToFile, maskSecrets, setLogLevel, withLogContext } from '../src/log';
import { findLeaks, logFile } from './support/log-capture';

const KEY = 'shk_test_' + 'ab12'.repeat(12);
const dir = mkdtempSync(path.join(tmpdir(), 'shiphook-log-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the logger', () => {
  it('writes JSON lines with the level, the context fields and no secret, however they are passed', async () => {
    const file = logFile(dir, 'redaction');
    logToFile(file);
    setLogLevel('debug');
    await withLogContext({ request_id: 'req-1' }, async () => {
      await new Promise((r) => setTimeout(r, 5)); // the context survives awaits
      log.warn(`key ${KEY} in a message`, {
        url: 'https://hook-user:hook-pass-123@example.com/hooks',
        webhook_secret: 'whsec-very-secret',
        headers: { authorization: 'Basic dXNlcjpwYXNz', 'x-tenant': 'blue' },
        nested: { error: `upstream said Authorization: Bearer ${KEY}`, password: 'hunter2hunter2' },
        err: new Error(`failed to POST https://u:p4ssw0rd-xyz@example.com with ${KEY}`),
      });
    });
    log.debug('debug line');
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    const [line] = lines;
    expect(line).toMatchObject({ level: 'warn', request_id: 'req-1', msg: 'key shk_test_*** in a message', url: 'https://***@example.com/hooks', webhook_secret: '[redacted]' });
    expect(line.headers).toEqual({ authorization: '[redacted]', 'x-tenant': 'blue' });
    expect(line.nested.password).toBe('[redacted]');
    expect(lines[1]).toMatchObject({ level: 'debug', msg: 'debug line' });
    expect(lines[1].request_id).toBeUndefined();
    const text = readFileSync(file, 'utf8');
    for (const secret of [KEY, 'hook-pass-123', 'whsec-very-secret', 'dXNlcjpwYXNz', 'hunter2hunter2', 'p4ssw0rd-xyz']) expect(text).not.toContain(secret);
    expect(findLeaks(dir, ['whsec-very-secret', 'hook-pass-123'])).toEqual([]);
  });

  it('keeps a line\'s own fields off the later lines of the same context', () => {
    const file = logFile(dir, 'context');
    logToFile(file);
    setLogLevel('info');
    withLogContext({ request_id: 'req-2' }, () => {
      log.info('first', { recovery_id: 'replay_1' });
      log.info('second');
    });
    const [first, second] = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(first).toMatchObject({ request_id: 'req-2', recovery_id: 'replay_1' });
    expect(second.request_id).toBe('req-2');
    expect(second.recovery_id).toBeUndefined();
  });

  it('masks keys, URL credentials and Authorization values inside any string', () => {
    expect(maskSecrets(`GET with ${KEY}`)).toBe('GET with shk_test_***');
    expect(maskSecrets('postgres://shiphook:pw@db:5432/x and http://token@h/')).toBe('postgres://***@db:5432/x and http://***@h/');
    expect(maskSecrets('Authorization: Basic abc== and bearer xyz.123')).toBe('Authorization: Basic *** and bearer ***');
    expect(maskSecrets('nothing to hide: hook_0123 user@example.com')).toBe('nothing to hide: hook_0123 user@example.com');
  });

  it('the suite-wide leak check finds what the logger would have masked', () => {
    // The check after the last test must fail on a raw secret: written here past the logger.
    const file = logFile(dir, 'raw');
    const basic = Buffer.from(`${KEY}:`).toString('base64');
    writeFileSync(file, `{"msg":"oops ${KEY}"}\n{"url":"https://a:b-secret@h"}\n{"webhook_secret":"plain"}\n{"msg":"my-webhook-secret"}\n{"auth":"Bearer abcdefgh12"}\n{"h":"${basic}"}\n`);
    const leaks = findLeaks(dir, ['my-webhook-secret', KEY]).filter((l) => l.file === 'raw.log');
    expect(leaks.map((l) => [l.line, l.what])).toEqual([
      [1, 'an API key'],
      [2, 'a URL password'],
      [3, 'a secret field'],
      [4, 'the secret "my…"'],
      [5, 'an Authorization value'],
      [6, 'the secret "c2…"'],
    ]);
    rmSync(file);
  });
});
