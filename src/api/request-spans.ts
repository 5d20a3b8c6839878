import { context, isSpanContextValid, type Link, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import { shiphookTracer } from '../telemetry/spans';
import { routeTemplate } from './http-metrics';
import { requestIdOf } from './request-id';

/**
 * With tracing (src/telemetry/sdk.ts), each API request is a server span, the root of
 * its trace: what it publishes or starts (src/events/publish.ts, the engine) is inside
 * it. A caller's `traceparent` is linked, not continued: the API is public, and a
 * caller must not choose the trace an event's delivery joins (nor its sampling).
 * Named by route template, never by path: a path can hold a portal link's token.
 */
export const requestSpans: RequestHandler = (req, res, next) => {
  const caller = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, req.headers));
  const links: Link[] = caller && isSpanContextValid(caller) ? [{ context: caller, attributes: { 'shiphook.link': 'caller' } }] : [];
  const span = shiphookTracer().startSpan(req.method, { kind: SpanKind.SERVER, links, attributes: { 'http.request.method': req.method } }, ROOT_CONTEXT);
  const active = trace.setSpan(ROOT_CONTEXT, span);
  // The body parser calls on from the socket's stream events: bound, they run in the request's context.
  context.bind(active, req);
  context.bind(active, res);
  res.once('close', () => {
    const route = routeTemplate(req, res);
    span.updateName(`${req.method} ${route}`);
    span.setAttributes({ 'http.route': route, 'http.response.status_code': res.statusCode, ...(requestIdOf(res) ? { 'shiphook.request_id': requestIdOf(res) } : {}) });
    if (res.statusCode >= 500 || !res.writableFinished) span.setStatus({ code: SpanStatusCode.ERROR, ...(res.writableFinished ? {} : { message: 'connection closed before the answer was sent' }) });
    span.end();
  });
  context.with(active, next);
};
