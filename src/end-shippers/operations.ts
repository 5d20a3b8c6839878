import type { Caller } from '../account/principal';
import { defineOperation } from '../operation';
import { pageQuery } from '../pagination';
import { ADDRESS_INPUT, EndShipper, EndShipperBody, EndShipperList } from './addresses.schema';
import { createEndShipper, getEndShipper, listEndShippers, ownEndShipper, replaceEndShipper, requireEndShipperCapability } from './end-shippers';

/** EndShippers (the API specification, 4.4): for users with the EndShipper capability, checked before the body is read. */
const tag = 'EndShippers';

export const endShipperOperations = [
  defineOperation({ method: 'POST', path: '/end_shippers', access: 'any key', idempotent: true,
    before: (_, { who }: Caller) => requireEndShipperCapability(who),
    body: { schema: EndShipperBody, rules: ADDRESS_INPUT },
    status: 201, response: EndShipper, tag, summary: 'Create an EndShipper', links: { 'GET /end_shippers/:id': '/id', 'PUT /end_shippers/:id': '/id' },
    handler: ({ body }, { db, who }: Caller) => createEndShipper(db, who, body.address) }),
  defineOperation({ method: 'GET', path: '/end_shippers', access: 'any key', query: pageQuery('es'),
    status: 200, response: EndShipperList, tag, summary: 'List EndShippers',
    handler: ({ query }, { db, who }: Caller) => listEndShippers(db, who, query) }),
  defineOperation({ method: 'GET', path: '/end_shippers/:id', access: 'any key', params: { id: 'es' },
    status: 200, response: EndShipper, tag, summary: 'Retrieve an EndShipper',
    handler: ({ params }, { db, who }: Caller) => getEndShipper(db, who, params.id) }),
  defineOperation({ method: 'PUT', path: '/end_shippers/:id', access: 'any key', params: { id: 'es' },
    before: ({ params }, { db, who }: Caller) => ownEndShipper(db, who, params.id),
    body: { schema: EndShipperBody, rules: ADDRESS_INPUT },
    status: 200, response: EndShipper, tag, summary: 'Replace an EndShipper\'s address', description: 'No partial update: every field required at creation is required.',
    handler: ({ body, target }, { db, who }: Caller) => replaceEndShipper(db, who, target, body.address) }),
];
