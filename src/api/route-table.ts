import { type Request, type RequestHandler, Router } from 'express';
import { ApiError } from '../errors/api-error';
import type { Reply } from './reply';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type Handler = (req: Request) => Promise<Reply>;
export type Route = [Method, string, Handler, ...RequestHandler[]];

/**
 * Builds a router from a table that reads like the seed's endpoint tables:
 * method, path, handler (plus optional guards). A known path called with
 * another method answers 405 with the JSON error body.
 */
export function routeTable(routes: Route[], guards: RequestHandler[] = []): Router {
  const router = Router();
  const byPath = new Map<string, Route[]>();
  for (const r of routes) byPath.set(r[1], [...(byPath.get(r[1]) ?? []), r]);
  for (const [path, entries] of byPath) {
    const route = router.route(path);
    for (const [method, , handler, ...routeGuards] of entries) {
      const verb = method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
      route[verb](...guards, ...routeGuards, async (req, res) => {
        const reply = await handler(req);
        res.status(reply.status);
        if (reply.body === undefined) res.end();
        else res.json(reply.body);
      });
    }
    const allowed = entries.map((e) => e[0]).join(', ');
    route.all((_req, res) => {
      res.setHeader('Allow', allowed);
      throw new ApiError('METHOD_NOT_ALLOWED', `Method not supported for ${path}; use ${allowed}.`);
    });
  }
  return router;
}
