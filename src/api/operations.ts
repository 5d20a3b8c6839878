import type { Config } from '../config';
import type { Db } from '../db/database';
import type { Principal } from '../account/principal';
import type { TemporalClientSource } from '../engine/client';
import { type Access, type Operation, served } from '../operation';
import { apiKeyOperations, operatorAccountOperations, userOperations } from '../account/operations';
import { endShipperOperations } from '../end-shippers/operations';
import { eventOperations, operatorEventOperations } from '../events/operations';
import { operationalWebhookOperations } from '../operational-webhooks/operations';
import { portalSessionOperations } from '../portal-sessions/operations';
import { shipmentOperations } from '../shipments/operations';
import { webhookOperations } from '../webhooks/operations';
import { listenerOperations } from '../listeners/operations';

/**
 * Every operation of the API, from the resources' declarations: the router (app.ts)
 * and the OpenAPI document (openapi.ts) are both built from these two lists.
 */

/** What the operator's operations are handed besides their input. */
export interface OperatorContext {
  db: Db;
  config: Config;
  temporal: TemporalClientSource;
  /** The request's scheme and host. */
  origin: string;
}

/** What the operations called with an API key are handed: the same, and the caller. */
export interface CallerContext extends OperatorContext {
  who: Principal;
}

/** Where each list is served. */
export const CALLER_BASE = '/v2';
export const OPERATOR_BASE = '/admin/v1';

/** Under /v2, in the order a request walks them: the busiest resources first (an operation's `alsoAt` twin right after it). */
export const CALLER_OPERATIONS: Operation<CallerContext, Exclude<Access, 'operator'>>[] = served([
  ...webhookOperations,
  ...eventOperations,
  ...userOperations,
  ...apiKeyOperations,
  ...endShipperOperations,
  ...shipmentOperations,
  ...portalSessionOperations,
  ...listenerOperations,
]);

/** Under /admin/v1, for the operator's token. */
export const OPERATOR_OPERATIONS: Operation<OperatorContext, 'operator'>[] = served([...operatorAccountOperations, ...operatorEventOperations, ...operationalWebhookOperations]);

/**
 * The declared operation at `METHOD /path` under /v2, for a door that calls operations by name
 * (the portal's pages and forms). Throws at once for one that is not declared, so a renamed
 * operation fails where the door is built, not at a user's click.
 */
export function callerOperation(route: `${Operation<CallerContext>['method']} /${string}`): Operation<CallerContext> {
  const op = CALLER_OPERATIONS.find((o) => `${o.method} ${o.path}` === route);
  if (!op) throw new Error(`no declared operation ${route}`);
  return op as Operation<CallerContext>;
}
