import type { IdPrefix } from './ids';
import { fieldsAsSent, type InputRules, parseInput, type z } from './schema';

/**
 * One declaration per operation of the API: method, path, who may call it, the
 * request's parts with their error rules, the success status and response, the
 * rate-limit bucket, the document's text, and the handler. src/api builds both the
 * Express router and the OpenAPI document from the resources' lists of these, so the
 * two cannot drift apart. Handlers get the parsed input and a context (the caller
 * and what the resource needs: the database, the configuration…); nothing below
 * them reads a raw body.
 */

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Who may call: any API key of the user, only a production key, only a test key (it makes test data), or the operator (the admin token). */
export type Access = 'any key' | 'production key' | 'test key' | 'operator';

/** The tighter per-account rate limits of costly operations (api/rate-limit.ts counts them). */
export type RateBucket = 'replays' | 'purchases' | 'children' | 'passwordChecks';

/** The parameter names of an Express path: `'/events/:id/payloads/:payload_id'` → `'id' | 'payload_id'`. */
export type PathParams<Path extends string> = Path extends `${string}:${infer Name}/${infer Rest}`
  ? Name | PathParams<`/${Rest}`>
  : Path extends `${string}:${infer Name}`
    ? Name
    : never;

/** A part of the request read with a schema; a failure answers with these rules' code and fields. */
export interface RequestPart<S extends z.ZodType = z.ZodType> {
  schema: S;
  rules: InputRules;
}

export interface BodyPart<S extends z.ZodType, T> extends RequestPart<S> {
  /** The body may be left out (every field is optional): it is then read as `{}`. */
  optional?: boolean;
  /** Where what the body may say depends on the target (a child's update reads only `name`). */
  schemaFor?: (target: T) => z.ZodType<z.output<S>>;
}

/** The document's text of an operation. */
export interface OperationText {
  tag: string;
  summary: string;
  description?: string;
  /** Operations that take an id from the response: `'METHOD /path'` → JSON pointer into the body. */
  links?: Record<`${Method} /${string}`, string>;
}

/**
 * An answer streamed as server-sent events (`text/event-stream`) rather than one JSON
 * body: what the handler of an operation declared with `stream` returns. The router
 * writes the events as `run` sends them and ends the answer when `run` returns; `signal`
 * aborts when the client goes away.
 */
export interface EventStream {
  run(sink: EventSink, signal: AbortSignal): Promise<void>;
}

export interface EventSink {
  /** One event: its name and its data (written as one line of JSON). */
  send(event: string, data: unknown): void;
  /** A comment line: keeps the connection, and the proxies on its way, from going idle. */
  comment(text: string): void;
}

/** The request as the router hands it over: path parameters, the query (one string each) and the JSON body. */
export interface RawRequest {
  params: Record<string, string>;
  query: Record<string, string>;
  body: unknown;
}

type Output<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface Input<Path extends string, Q, B, T> {
  params: Record<PathParams<Path>, string>;
  query: Q;
  body: B;
  /** What `before` returned. */
  target: T;
}

/** A declared operation, its input types erased: what the router and the document read. */
export interface Operation<Ctx, A extends Access = Access> extends OperationText {
  method: Method;
  /**
   * Also served at this method, the same operation in every way (rules, handler, status): the
   * official Java client updates with PUT, as its HttpURLConnection cannot send PATCH.
   */
  alsoAt?: Method;
  /** On the operation served at `alsoAt`: the method it was declared with. */
  sameAs?: Method;
  /** Express form, relative to the API's base (`/v2` or `/admin/v1`): `/webhooks/:id`. */
  path: string;
  access: A;
  /** The id prefix of each path parameter (the document's examples). */
  params?: Record<string, IdPrefix>;
  query?: RequestPart;
  body?: RequestPart & { optional?: boolean };
  status: number;
  /** Left out: the success answers no body. */
  response?: z.ZodType;
  /** The data of each event, when the success is a stream of server-sent events (the handler returns an {@link EventStream}). */
  stream?: z.ZodType;
  rateLimit?: RateBucket;
  /** Writes that may change the caller's user row, keys or balance: the api forgets its cached caller after them. */
  changesCaller?: boolean;
  /** Creates or buys: an `Idempotency-Key` header makes a retry answer the first answer instead of doing it again (api/idempotency.ts). */
  idempotent?: boolean;
  /** Reads the request's parts in order (query, `before`, body) and runs the handler; resolves with the response body. */
  run: (request: RawRequest, ctx: Ctx) => Promise<unknown>;
}

type ParamsOf<Path extends string> = [PathParams<Path>] extends [never] ? { params?: never } : { params: Record<PathParams<Path>, IdPrefix> };

export type OperationSpec<Ctx, A extends Access, Path extends string, QS, BS extends z.ZodType | undefined, T> = OperationText &
  ParamsOf<Path> & {
    method: Method;
    alsoAt?: Method;
    path: Path;
    access: A;
    query?: RequestPart<QS & z.ZodType>;
    body?: BodyPart<BS & z.ZodType, T>;
    /**
     * Runs before the body is read, so a resource the path names that is not the
     * caller's (404), or an operation the caller may not use (403), is answered before a
     * bad body (422). What it returns reaches the handler as `target`.
     */
    before?: (input: Omit<Input<Path, Output<QS>, undefined, undefined>, 'body' | 'target'>, ctx: Ctx) => Promise<T> | T;
    status: number;
    response?: z.ZodType;
    stream?: z.ZodType;
    rateLimit?: RateBucket;
    changesCaller?: boolean;
    idempotent?: boolean;
    handler: (input: Input<Path, Output<QS>, Output<BS>, T>, ctx: Ctx) => Promise<unknown>;
  };

export function defineOperation<Ctx, A extends Access, Path extends string, QS = undefined, BS extends z.ZodType | undefined = undefined, T = undefined>(
  spec: OperationSpec<Ctx, A, Path, QS, BS, T>,
): Operation<Ctx, A> {
  const { handler, before, body, query, ...declared } = spec;
  return {
    ...declared,
    ...(query ? { query } : {}),
    ...(body ? { body: { schema: body.schema, rules: body.rules, optional: body.optional } } : {}),
    run: async (raw, ctx) => {
      const params = raw.params as Record<PathParams<Path>, string>;
      const q = (query ? parseInput(query.schema, raw.query, query.rules) : undefined) as Output<QS>;
      const target = (before ? await before({ params, query: q }, ctx) : undefined) as T;
      const b = (body ? parseInput(body.schemaFor?.(target) ?? body.schema, raw.body, body.rules) : undefined) as Output<BS>;
      try {
        return await handler({ params, query: q, body: b, target }, ctx);
      } catch (err) {
        throw fieldsAsSent(err, body?.rules);
      }
    },
  };
}

/** The operations as served: each declared one, and once more at its `alsoAt` method. */
export function served<O extends Operation<never>>(operations: readonly O[]): O[] {
  return operations.flatMap((op) => (op.alsoAt ? [op, { ...op, method: op.alsoAt, alsoAt: undefined, sameAs: op.method }] : [op]));
}
