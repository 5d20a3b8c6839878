import net from 'node:net';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb, isDatabaseUnavailable } from '../../src/db/database';

/**
 * PostgreSQL's fast shutdown ends every backend with FATAL 57P01. A connection that has
 * just finished its handshake can read its ReadyForQuery and that FATAL in one packet:
 * pg-pool hands the new client over (taking its own error listener off) and the client
 * emits the FATAL before the caller could add one. Real PostgreSQL cannot be made to
 * split its packets on demand, so this test stands in for it with a server that speaks
 * just that much of the wire protocol.
 */
function message(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}
const int32 = (n: number) => { const b = Buffer.alloc(4); b.writeInt32BE(n); return b; };
const fields = (pairs: [string, string][]) => Buffer.concat([...pairs.map(([k, v]) => Buffer.from(`${k}${v}\0`, 'utf8')), Buffer.from([0])]);

const HANDSHAKE_THEN_FATAL = Buffer.concat([
  message('R', int32(0)), // AuthenticationOk
  message('K', Buffer.concat([int32(1), int32(2)])), // BackendKeyData
  message('Z', Buffer.from('I')), // ReadyForQuery
  message('E', fields([['S', 'FATAL'], ['V', 'FATAL'], ['C', '57P01'], ['M', 'terminating connection due to administrator command']])),
]);

const server = net.createServer((socket) => {
  socket.once('data', () => socket.end(HANDSHAKE_THEN_FATAL)); // the startup message, answered in one write
  socket.on('error', () => undefined);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('a connection PostgreSQL ends right after its handshake', () => {
  it('fails the query that needed it as "database unavailable" and leaves the process running', async () => {
    const { port } = server.address() as net.AddressInfo;
    const db = createDb(`postgres://shiphook@127.0.0.1:${port}/shiphook`, 2);
    const crashed: unknown[] = [];
    const onCrash = (err: unknown) => crashed.push(err);
    process.on('uncaughtException', onCrash);
    try {
      for (let i = 0; i < 3; i++) {
        const err = await sql`select 1`.execute(db).then(() => undefined, (e: unknown) => e);
        expect(err, 'the query cannot succeed on a terminated connection').toBeDefined();
        expect(isDatabaseUnavailable(err), String(err)).toBe(true);
      }
      expect(crashed).toEqual([]);
    } finally {
      process.off('uncaughtException', onCrash);
      await db.destroy();
    }
  });
});
