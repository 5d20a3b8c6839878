import type { Db } from '../db/database';
import { ApiError } from '../errors/api-error';
import { callerScope, OPERATOR_SCOPE } from '../idempotency/scope';
import type { Operation, RawRequest } from '../operation';
import type { Answer, HeaderSink } from './answer';
import { answerOnce } from './idempotency';
import { CALLER_BASE, type CallerContext, OPERATOR_BASE, type OperatorContext } from './operations';
import type { PrincipalCache } from './principal-cache';
import type { RateLimits } from './rate-limit';

/**
 * The one way a declared operation runs, whichever door it was called through: the API's
 * router (api/router.ts) or the portal's pages and forms (portal/router.ts). It applies the
 * guards the declaration asks for — the account's tighter rate limit, a production key,
 * the answer kept for an Idempotency-Key, forgetting the cached caller after a write to
 * the account — and then runs the operation, so a rule added to an operation holds at
 * every door. The door itself authenticates its caller and counts each request against
 * the general rate limit (api/rate-limit.ts).
 */
export interface OperationCall extends RawRequest {
  /** The caller's Idempotency-Key for this call, if any. */
  idempotencyKey?: string;
  /** Where the guards put the answer's headers. */
  setHeader: HeaderSink;
}

export type RunOperation<Ctx> = (op: Operation<Ctx>, ctx: Ctx, call: OperationCall) => Promise<Answer>;

/** Operations called with an API key (or a portal session, which acts with the key that opened it). */
export function callerOperationRunner(deps: { db: Db; limits: RateLimits; principals: PrincipalCache }): RunOperation<CallerContext> {
  return async (op, ctx, call) => {
    const { who } = ctx;
    if (op.rateLimit) await deps.limits.bucket(op.rateLimit, who, call.body, call.setHeader);
    if (op.access === 'production key' && who.mode !== 'production') {
      throw new ApiError('MODE.UNAUTHORIZED', 'This operation requires a production API key.');
    }
    if (op.access === 'test key' && who.mode !== 'test') {
      throw new ApiError('MODE.CONFLICT', 'This operation makes test data: it takes a test API key, not a production one.');
    }
    try {
      return await answer(deps.db, op, ctx, call, CALLER_BASE, callerScope(who));
    } finally {
      // Read your own writes: this process drops the caller's cached user and keys at once
      // (other processes hear of the change from the database: api/principal-cache.ts).
      if (op.changesCaller && op.method !== 'GET') deps.principals.forgetUser(who.user.id);
    }
  };
}

/** The operator's operations (the admin token): no rate limit, one idempotency scope. */
export function operatorOperationRunner(db: Db): RunOperation<OperatorContext> {
  return (op, ctx, call) => answer(db, op, ctx, call, OPERATOR_BASE, OPERATOR_SCOPE);
}

function answer<Ctx>(db: Db, op: Operation<Ctx>, ctx: Ctx, call: OperationCall, base: string, scope: string): Promise<Answer> {
  const perform = async (): Promise<Answer> => ({ status: op.status, body: await op.run(call, ctx) });
  if (!op.idempotent || call.idempotencyKey === undefined) return perform();
  const path = base + op.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(call.params[name] ?? ''));
  return answerOnce(db, { scope, key: call.idempotencyKey, method: op.method, path, body: call.body }, call.setHeader, perform);
}
