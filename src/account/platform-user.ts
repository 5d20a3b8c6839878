/**
 * The id of the platform's own user: it owns the operational webhooks and their events
 * (src/operational-webhooks/platform.ts says how). Not a customer account: no key, no email, no
 * password, no parent, and the operator's account operations do not reach it.
 */
export const PLATFORM_USER_ID = 'user_00000000000000000000000000000000';
