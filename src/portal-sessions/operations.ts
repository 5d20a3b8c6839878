import type { Config } from '../config';
import type { Caller } from '../account/principal';
import { defineOperation } from '../operation';
import { createPortalSession } from './portal-sessions';
import { PortalSession } from './portal-sessions.schema';

/** Portal links (beyond the API specification): any key, for its own user and mode. */
type Context = Caller & { config: Config; /** This request's scheme and host, for links when no public URL is configured. */ origin: string };

export const portalSessionOperations = [
  defineOperation({ method: 'POST', path: '/portal_sessions', access: 'any key',
    status: 201, response: PortalSession, tag: 'Webhook portal', summary: 'Open a webhook portal link',
    description: 'A link that opens the customer webhook portal for this key\'s user and mode, valid for a bounded time (default 1 h), usable without the key.',
    handler: (_, { db, config, who, origin }: Context) => createPortalSession(db, config, who, config.publicUrl ?? origin) }),
];
