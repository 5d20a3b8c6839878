import type { Principal } from '../account/principal';

/**
 * Whose keys: the same Idempotency-Key sent by two callers names two keys. An API key's
 * caller is its user in its mode (a test key and a production key of one user do not
 * share keys); the operator (the admin token) is one caller; the per-event keys of a
 * batch publish are the operator's, apart from its request keys (they name events, not
 * requests).
 */
export const callerScope = (who: Principal) => `${who.user.id}/${who.mode}`;
export const OPERATOR_SCOPE = 'operator';
export const OPERATOR_EVENT_SCOPE = 'operator/events';
