import { type Request, Router } from 'express';
import { ApiError } from '../errors/api-error';
import { noteRoute } from './http-metrics';
import { IDEMPOTENCY_KEY_HEADER } from './idempotency';
import { requireJsonBody } from './json-body';
import type { EventStream, Operation } from '../operation';
import { sendEventStream } from './event-stream';
import type { RunOperation } from './operation-runner';

/**
 * The Express router of a list of declared operations: one route per path, in the
 * order of the list, a JSON body check and then the operation with its guards (`run`);
 * a known path called with another method answers 405 with `Allow` and the JSON error body.
 */
export function operationRouter<Ctx>(operations: readonly Operation<Ctx>[], contextOf: (req: Request) => Ctx, run: RunOperation<Ctx>): Router {
  const router = Router();
  const byPath = new Map<string, Operation<Ctx>[]>();
  for (const op of operations) byPath.set(op.path, [...(byPath.get(op.path) ?? []), op]);
  for (const [path, ops] of byPath) {
    const route = router.route(path);
    for (const op of ops) {
      const verb = op.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
      route[verb](requireJsonBody, async (req, res) => {
        const { status, body } = await run(op, contextOf(req), {
          // Declared paths have named parameters only (no wildcards), so each is one string.
          params: req.params as Record<string, string>,
          query: op.query ? queryParams(req) : {},
          body: req.body === undefined ? {} : req.body,
          idempotencyKey: req.get(IDEMPOTENCY_KEY_HEADER),
          setHeader: (name, value) => res.setHeader(name, value),
        });
        res.status(status);
        if (op.stream) await sendEventStream(res, body as EventStream);
        else if (body === undefined) res.end();
        else res.json(body);
      });
    }
    const allowed = ops.map((op) => op.method).join(', ');
    route.all((req, res) => {
      res.setHeader('Allow', allowed);
      // The path as the client calls it: with its mount (`/v2`, `/admin/v1`).
      throw new ApiError('METHOD_NOT_ALLOWED', `Method not supported for ${req.baseUrl}${path}; use ${allowed}.`);
    });
  }
  // Last: an error of these routes leaves with its route template known (see noteRoute).
  router.use(noteRoute);
  return router;
}

/** The query as one string per parameter: a repeated one counts by its last value, a valueless `?page_size` as not given. */
function queryParams(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(req.query)) {
    const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (typeof value === 'string' && value !== '') out[name] = value;
  }
  return out;
}
