import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../errors/api-error';

/**
 * Requests Node's HTTP parser refuses before the app sees them (an unknown method,
 * a header with NUL or CR, headers over the limit, CONNECT) get the API's JSON
 * error body too, not an empty 400/431 or a closed socket. Both the `shiphook api`
 * server and the tests' server call this.
 */
export function answerParserErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    if (err.code === 'HPE_HEADER_OVERFLOW') return reply(socket, 431, 'Request Header Fields Too Large', new ApiError('BAD_REQUEST', 'The request headers are too large.'));
    if (err.code === 'HPE_INVALID_METHOD') return reply(socket, 405, 'Method Not Allowed', new ApiError('METHOD_NOT_ALLOWED', 'This method is not supported.'));
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return reply(socket, 408, 'Request Timeout', new ApiError('BAD_REQUEST', 'The request took too long to arrive.'));
    reply(socket, 400, 'Bad Request', new ApiError('BAD_REQUEST', 'The request could not be parsed as HTTP/1.1.'));
  });
  server.on('connect', (_req, socket: Duplex) => {
    reply(socket, 405, 'Method Not Allowed', new ApiError('METHOD_NOT_ALLOWED', 'CONNECT is not supported: this is not a proxy.'));
  });
}

function reply(socket: Duplex, status: number, reason: string, error: ApiError): void {
  const body = JSON.stringify(error.toBody());
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
