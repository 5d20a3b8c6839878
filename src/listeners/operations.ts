import type { Caller } from '../account/principal';
import { Empty } from '../account/api-keys.schema';
import type { Config } from '../config';
import { defineOperation } from '../operation';
import { createListener, deleteListener, listListeners, ownListener } from './listeners';
import { CreateListenerBody, LISTENER_ANSWER_INPUT, LISTENER_INPUT, ListenerAnswerBody, ListenerList, ListenerStreamEvent, NewListener } from './listeners.schema';
import { answerRequest } from './requests';
import { listenerStream } from './stream';

/** Listeners: what `shiphook listen` runs on (docs/api.md, Listeners). Beyond the API specification. */
type Context = Caller & { config: Config };
const tag = 'Listeners';

export const listenerOperations = [
  defineOperation({ method: 'POST', path: '/listeners', access: 'any key',
    body: { schema: CreateListenerBody, rules: LISTENER_INPUT },
    status: 201, response: NewListener, tag, summary: 'Create a listener',
    description: 'A target the user\'s events of the key\'s mode are delivered to like a webhook\'s (its own subscription and secret), which a client receives through its stream instead of at a URL: the server never connects anywhere for it. It is removed by DELETE, or once no stream of it was open for the grace period (`SHIPHOOK_LISTENER_GRACE`, default 60 s).',
    links: { 'GET /listeners/:id/stream': '/id', 'DELETE /listeners/:id': '/id' },
    handler: ({ body }, { db, config, who }: Context) => createListener(db, config, who, body.listener) }),
  defineOperation({ method: 'GET', path: '/listeners', access: 'any key',
    status: 200, response: ListenerList, tag, summary: 'List listeners', description: 'All listeners of the key\'s user and mode, newest first.',
    handler: (_, { db, config, who }: Context) => listListeners(db, config, who) }),
  defineOperation({ method: 'DELETE', path: '/listeners/:id', access: 'any key', params: { id: 'lst' },
    status: 200, response: Empty, tag, summary: 'Remove a listener', description: 'At once; its deliveries still waiting end as to a deleted webhook.',
    handler: async ({ params }, { db, who }: Context) => {
      await deleteListener(db, who, params.id);
      return {};
    } }),
  defineOperation({ method: 'GET', path: '/listeners/:id/stream', access: 'any key', params: { id: 'lst' },
    status: 200, stream: ListenerStreamEvent, tag, summary: 'Receive a listener\'s deliveries',
    description: 'Server-sent events: `ready`, then a `request` for each delivery attempt waiting for an answer (again after a reconnect if not answered: at least once), `gone` when the listener was removed; a comment line every heartbeat. Forward each request and post the answer to `POST /v2/listeners/{id}/requests/{request_id}/answer` before its `expires_at`.',
    handler: async ({ params }, { db, config, who }: Context) => {
      await ownListener(db, who, params.id);
      return listenerStream(db, config, params.id);
    } }),
  defineOperation({ method: 'POST', path: '/listeners/:id/requests/:request_id/answer', access: 'any key', params: { id: 'lst', request_id: 'payload' },
    before: ({ params }, { db, who }: Context) => ownListener(db, who, params.id),
    body: { schema: ListenerAnswerBody, rules: LISTENER_ANSWER_INPUT },
    status: 200, response: Empty, tag, summary: 'Answer a forwarded request',
    description: 'What the local endpoint answered (or why it did not: status 0 and `error`): recorded as the delivery attempt, a Payload like any webhook\'s.',
    handler: async ({ params, body }, { db }: Context) => {
      await answerRequest(db, params.id, params.request_id, body);
      return {};
    } }),
];
