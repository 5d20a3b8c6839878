import type { Db } from '../db/database';
import { defineOperation } from '../operation';
import { pageQuery } from '../pagination';
import { createKeys, deleteKey, listKeys, setKeyActive } from './api-keys';
import { ApiKey, ApiKeys, CreateKeyBody, Empty, KEY_INPUT } from './api-keys.schema';
import type { Caller } from './principal';
import { createChildUser, createParentUser, requireParent } from './user-creation';
import { deleteChildUser, listChildren, operatorUpdateUser, updateUser, userView, visibleUser } from './users';
import {
  AnyUser, ChildList, CreateChildBody, CreatedChild, CreatedParent, NewParentUser, OPERATOR_UPDATE_INPUT, OperatorUserUpdate, PARENT_CREATE_INPUT, ParentUser,
  UpdateChildBody, UpdateUserBody, USER_CREATE_INPUT, USER_UPDATE_INPUT,
} from './users.schema';
import type { UserRow } from './tables';

/**
 * Users (the API specification, 4.5; children per COMPATIBILITY.md) and API keys (4.1),
 * production keys only. Every write may change the caller's user row or keys, so the
 * api forgets its cached caller after it (`changesCaller`).
 */
const users = 'Users';
const keys = 'API keys';

/** The body of a user's update as its target may change it: a child (or a parent editing a child) only its name. */
const update = { schema: UpdateUserBody, rules: USER_UPDATE_INPUT, schemaFor: (target: UserRow) => (target.parent_id ? UpdateChildBody : UpdateUserBody) };

export const userOperations = [
  defineOperation({ method: 'GET', path: '/users', access: 'production key',
    status: 200, response: AnyUser, tag: users, summary: 'Retrieve the authenticated User',
    handler: (_, { db, who }: Caller) => userView(db, who.user) }),
  defineOperation({ method: 'PATCH', path: '/users', access: 'production key', rateLimit: 'passwordChecks', changesCaller: true,
    before: (_, { who }: Caller) => who.user,
    body: update,
    status: 200, response: AnyUser, tag: users, summary: 'Update the authenticated User',
    handler: ({ body, target }, { db }: Caller) => updateUser(db, target, body.user) }),
  defineOperation({ method: 'POST', path: '/users', access: 'production key', rateLimit: 'children', changesCaller: true, idempotent: true,
    before: (_, { who }: Caller) => requireParent(who),
    body: { schema: CreateChildBody, rules: USER_CREATE_INPUT },
    status: 201, response: CreatedChild, tag: users, summary: 'Create a child User', description: 'Answers the child with one test and one production key.',
    links: { 'GET /users/:id': '/id', 'PATCH /users/:id': '/id', 'DELETE /users/:id': '/id' },
    handler: ({ body }, { db, who }: Caller) => createChildUser(db, who, body.user) }),
  defineOperation({ method: 'GET', path: '/users/children', access: 'production key', query: pageQuery('user'),
    status: 200, response: ChildList, tag: users, summary: 'List child Users', description: 'Oldest first, paged with `after_id`.',
    handler: ({ query }, { db, who }: Caller) => listChildren(db, who, query) }),
  defineOperation({ method: 'GET', path: '/users/:id', access: 'production key', params: { id: 'user' },
    status: 200, response: AnyUser, tag: users, summary: 'Retrieve a User (the caller or a child)',
    handler: async ({ params }, { db, who }: Caller) => userView(db, await visibleUser(db, who, params.id)) }),
  defineOperation({ method: 'PATCH', alsoAt: 'PUT', path: '/users/:id', access: 'production key', params: { id: 'user' }, rateLimit: 'passwordChecks', changesCaller: true,
    before: ({ params }, { db, who }: Caller) => visibleUser(db, who, params.id),
    body: update,
    status: 200, response: AnyUser, tag: users, summary: 'Update a User (the caller or a child)',
    handler: ({ body, target }, { db }: Caller) => updateUser(db, target, body.user) }),
  defineOperation({ method: 'DELETE', path: '/users/:id', access: 'production key', params: { id: 'user' }, changesCaller: true,
    status: 204, tag: users, summary: 'Delete a child User',
    handler: ({ params }, { db, who }: Caller) => deleteChildUser(db, who, params.id) }),
];

export const apiKeyOperations = [
  defineOperation({ method: 'POST', path: '/api_keys', access: 'production key', changesCaller: true, idempotent: true,
    body: { schema: CreateKeyBody, rules: KEY_INPUT },
    status: 201, response: ApiKey, tag: keys, summary: 'Create an API key',
    description: 'Creates keys for the User and all its children; answers the caller\'s key. ReferralCustomers and children only.',
    links: { 'POST /api_keys/:id/disable': '/id', 'POST /api_keys/:id/enable': '/id', 'DELETE /api_keys/:id': '/id' },
    handler: ({ body }, { db, who }: Caller) => createKeys(db, who, body.mode) }),
  defineOperation({ method: 'GET', path: '/api_keys', access: 'production key',
    status: 200, response: ApiKeys, tag: keys, summary: 'List API keys', description: 'Both modes; the User and all its children (a child sees only its own keys).',
    handler: (_, { db, who }: Caller) => listKeys(db, who) }),
  defineOperation({ method: 'POST', path: '/api_keys/:id/enable', access: 'production key', params: { id: 'ak' }, changesCaller: true,
    status: 200, response: ApiKey, tag: keys, summary: 'Enable an API key',
    handler: ({ params }, { db, who }: Caller) => setKeyActive(db, who, params.id, true) }),
  defineOperation({ method: 'POST', path: '/api_keys/:id/disable', access: 'production key', params: { id: 'ak' }, changesCaller: true,
    status: 200, response: ApiKey, tag: keys, summary: 'Disable an API key',
    handler: ({ params }, { db, who }: Caller) => setKeyActive(db, who, params.id, false) }),
  defineOperation({ method: 'DELETE', path: '/api_keys/:id', access: 'production key', params: { id: 'ak' }, changesCaller: true,
    status: 200, response: Empty, tag: keys, summary: 'Delete an API key', description: 'Answers an empty object (the API specification, 4.1).',
    handler: async ({ params }, { db, who }: Caller) => {
      await deleteKey(db, who, params.id);
      return {};
    } }),
];

/** The operator's side of accounts, under /admin/v1. */
export const operatorAccountOperations = [
  defineOperation({ method: 'POST', path: '/users', access: 'operator',
    body: { schema: NewParentUser, rules: PARENT_CREATE_INPUT },
    status: 201, response: CreatedParent, tag: 'Operator', summary: 'Create a parent User with a test and a production key',
    handler: ({ body }, { db }: { db: Db }) => createParentUser(db, body) }),
  defineOperation({ method: 'PATCH', path: '/users/:id', access: 'operator', params: { id: 'user' },
    body: { schema: OperatorUserUpdate, rules: OPERATOR_UPDATE_INPUT, optional: true },
    status: 200, response: ParentUser, tag: 'Operator', summary: 'Set a parent User\'s email or password',
    description: 'Without `current_password`: how an account created without a password gets one.',
    handler: ({ params, body }, { db }: { db: Db }) => operatorUpdateUser(db, params.id, body) }),
];
