import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse as parseCookies, serialize as cookie } from 'cookie';
import express, { type NextFunction, type Request, type Response, Router } from 'express';
import helmet from 'helmet';
import type { Config } from '../config';
import type { Db } from '../db/database';
import { deliveryProgress } from '../events/deliveries';
import { EVENT_STATUSES } from '../events/tables';
import { isEventType } from '../events/types';
import { hasPrefix } from '../ids';
import { endSession, exchangeLink, sessionPrincipal } from '../portal-sessions/portal-sessions';
import type { Principal } from '../account/principal';
import { healthOf } from '../webhooks/health-view';
import { ownWebhooks, webhookView } from '../webhooks/webhooks';
import type { WebhookRow } from '../webhooks/tables';
import { ApiError } from '../errors/api-error';
import { log } from '../log';
import { routeTemplate } from '../api/http-metrics';
import { hourlyAttempts, recentAttempts } from '../webhooks/delivery-history';
import type { Answer } from '../api/answer';
import { callerOperation, type CallerContext } from '../api/operations';
import type { RunOperation } from '../api/operation-runner';
import { countRequests, type RateLimits } from '../api/rate-limit';
import { eventPage, eventsPage } from './event-pages';
import { headersFrom } from './header-form';
import { eventTypesFrom } from './event-types-form';
import { html } from './html';
import { bare, IDEMPOTENCY_FIELD, type PageContext } from './layout';
import { webhookPage, type WebhookRowView, webhooksPage } from './webhook-pages';
import type { z } from '../schema';
import type { Webhook, WebhookHealth, WebhookSecret } from '../webhooks/webhooks.schema';
import type { RecoveryView } from '../engine/recovery.schema';
import type { DeliveredEvent, Event, EventList, PayloadList } from '../events/events.schema';
import { errorText } from '../errors/error-text';

/**
 * The customer webhook portal, served by the api under /portal: server-rendered pages,
 * a client of the API's declared operations. Every action and every page an operation
 * answers runs that operation through the same runner as the API (api/operation-runner.ts),
 * with the session's caller: its guards (the account's replay rate limit, idempotency of
 * replay and recovery, production-key rules) hold here too, and each portal request counts
 * against the general rate limit of the key that opened the session. What no operation
 * answers — the health of every webhook at once, a webhook's recent attempts and hourly
 * chart, an event's delivery progress — are the page's own reads, scoped by the session.
 *
 * A portal link (POST /v2/portal_sessions) works once: its first visit opens a session
 * held in an HttpOnly, SameSite=Lax cookie and sends the browser on without the token in
 * its address bar; every form carries a CSRF token derived from the session (and an
 * Idempotency-Key of its own, so a double submit is answered once), and every page a
 * strict Content-Security-Policy (no script at all, no inline style).
 */
const COOKIE = 'shiphook_portal';
const CSS = readFileSync(new URL('./assets/portal.css', import.meta.url), 'utf8');
const PAGE_SIZE = 25;

/** The declared operations the portal calls. */
const OPS = {
  listWebhooks: callerOperation('GET /webhooks'),
  getWebhook: callerOperation('GET /webhooks/:id'),
  health: callerOperation('GET /webhooks/:id/health'),
  createWebhook: callerOperation('POST /webhooks'),
  updateWebhook: callerOperation('PATCH /webhooks/:id'),
  deleteWebhook: callerOperation('DELETE /webhooks/:id'),
  rotateSecret: callerOperation('POST /webhooks/:id/rotate_secret'),
  recover: callerOperation('POST /webhooks/:id/recover'),
  sendTest: callerOperation('POST /webhooks/:id/test'),
  listEvents: callerOperation('GET /events'),
  getEvent: callerOperation('GET /events/:id'),
  payloads: callerOperation('GET /events/:id/payloads'),
  replay: callerOperation('POST /events/:id/replay'),
};

export interface PortalDeps {
  db: Db;
  config: Config;
  limits: RateLimits;
  /** Runs a declared operation with its guards: the API's runner. */
  run: RunOperation<CallerContext>;
  /** The operations' context for a request of this caller. */
  contextOf: (req: Request, who: Principal) => CallerContext;
}

interface PortalSession {
  who: Principal;
  /** The session's token, from its cookie. */
  token: string;
  csrf: string;
}

declare module 'express-serve-static-core' {
  interface Request {
    portal?: PortalSession;
  }
}

const csrfFor = (token: string) => createHmac('sha256', token).update('shiphook portal csrf').digest('base64url');

export function portalRouter(deps: PortalDeps): Router {
  const { db, config } = deps;
  const router = Router();
  router.use(
    helmet({
      contentSecurityPolicy: {
        useDefaults: false,
        directives: { defaultSrc: ["'none'"], styleSrc: ["'self'"], imgSrc: ["'self'"], formAction: ["'self'"], frameAncestors: ["'none'"], baseUri: ["'none'"] },
      },
      referrerPolicy: { policy: 'no-referrer' },
    }),
  );
  router.use((_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  router.get('/assets/portal.css', (_req, res) => {
    res.type('text/css').setHeader('Cache-Control', 'public, max-age=300');
    res.send(CSS);
  });

  // Secure when the browser is on https: this request came over TLS, or the portal's public URL (behind a
  // TLS-terminating proxy, where this process sees plain http) is https.
  const secure = (req: Request) => req.secure || (config.publicUrl?.startsWith('https://') ?? false);

  // The link works once: its first visit opens a session in a cookie, then the browser
  // goes on without the token in its address bar (and in its history and referrers).
  router.get('/login/:token', async (req, res) => {
    const exchanged = await exchangeLink(db, config, String(req.params.token));
    if ('refused' in exchanged) {
      if (exchanged.refused === 'used') {
        res.status(410).type('html').send(bare('Link already used', html`This portal link has been used already: each link opens the portal once, and the browser that opened it stays signed in until the session ends. If that was this browser, <a href="/portal/">continue to the portal</a>. Otherwise ask for a new link: it comes from the application that sent you here (which calls <code>POST /v2/portal_sessions</code>).`));
        return;
      }
      res.status(403).type('html').send(bare('Link refused', 'This portal link is invalid or has expired. Ask for a new one (POST /v2/portal_sessions).'));
      return;
    }
    // Lax, not Strict: a link opened from a mail or chat page is a cross-site navigation, and a Strict cookie
    // would not come with the redirect that follows it. Forms are guarded by their CSRF token besides.
    res.setHeader('Set-Cookie', cookie(COOKIE, exchanged.token, { httpOnly: true, sameSite: 'lax', secure: secure(req), path: '/portal', expires: exchanged.session.expiresAt }));
    res.redirect(303, '/portal/');
  });

  router.use(async (req, res, next) => {
    const token = parseCookies(req.headers.cookie ?? '')[COOKIE];
    const session = token ? await sessionPrincipal(db, token) : undefined;
    if (!session) {
      res.status(401).type('html').send(bare('Signed out', 'Open the portal from a new portal link (POST /v2/portal_sessions). A session lasts a limited time after its link is opened.'));
      return;
    }
    req.portal = { who: session, token: token!, csrf: csrfFor(token!) };
    next();
  });
  // Each request of the session counts against the general rate limit of the key that opened it, as an API request does.
  router.use(countRequests(deps.limits, (req) => req.portal!.who));
  router.use(express.urlencoded({ extended: false, limit: '64kb' }));
  // CSRF: every form posts the session's token; the cookie is SameSite=Lax besides.
  router.use((req, res, next) => {
    if (req.method !== 'POST') return next();
    const given = Buffer.from(String((req.body as Record<string, unknown>)?._csrf ?? ''));
    const expected = Buffer.from(req.portal!.csrf);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      res.status(403).type('html').send(bare('Refused', 'This form is stale or did not come from the portal. Go back, reload the page and try again.'));
      return;
    }
    next();
  });

  const ctx = (req: Request, extra: Partial<PageContext> = {}): PageContext => ({ mode: req.portal!.who.mode, csrf: req.portal!.csrf, ...extra });
  const who = (req: Request) => req.portal!.who;
  const form = (req: Request) => (req.body ?? {}) as Record<string, string>;
  /** Runs a declared operation as the session's caller; resolves with its answer's body. */
  const call = async <T>(req: Request, res: Response, op: (typeof OPS)[keyof typeof OPS], parts: { params?: Record<string, string>; query?: Record<string, string>; body?: unknown } = {}): Promise<T> => {
    const key = req.method === 'POST' ? form(req)[IDEMPOTENCY_FIELD] : undefined;
    const answer: Answer = await deps.run(op, deps.contextOf(req, who(req)), {
      params: parts.params ?? {},
      query: parts.query ?? {},
      body: parts.body ?? {},
      ...(key ? { idempotencyKey: key } : {}),
      setHeader: (name, value) => res.setHeader(name, value),
    });
    return answer.body as T;
  };

  async function rows(hooks: WebhookRow[]): Promise<WebhookRowView[]> {
    const health = await healthOf(db, hooks);
    return hooks.map((row) => {
      const h = webhookView(row); // masked, as everywhere
      return { id: h.id, url: h.url, created_at: h.created_at, disabled_at: h.disabled_at, headerNames: h.custom_headers.map((c) => c.name), eventTypes: h.event_types, health: health.get(h.id)! };
    });
  }
  async function showWebhook(req: Request, res: Response, id: string, extra: Partial<PageContext> = {}, newSecret?: { secret: string; previousExpiresAt: string | null }) {
    const params = { id };
    const [hook, health] = await Promise.all([call<WebhookAnswer>(req, res, OPS.getWebhook, { params }), call<HealthAnswer>(req, res, OPS.health, { params })]);
    const [recent, hours] = await Promise.all([recentAttempts(db, who(req), id), hourlyAttempts(db, who(req), id)]);
    const view: WebhookRowView = { id: hook.id, url: hook.url, created_at: hook.created_at, disabled_at: hook.disabled_at, headerNames: hook.custom_headers.map((c) => c.name), eventTypes: hook.event_types, health };
    res.status(extra.errors ? 422 : 200).type('html').send(webhookPage(ctx(req, extra), view, { recent, hours }, newSecret));
  }
  const notice = (req: Request) => (typeof req.query.notice === 'string' ? req.query.notice.slice(0, 200) : undefined);
  const back = (res: Response, path: string, message: string) => res.redirect(303, `${path}?notice=${encodeURIComponent(message)}`);
  /** A refused form is shown again with why; anything else (a 404, a 429) goes to the error page. */
  const refusedForm = (err: unknown): err is ApiError => err instanceof ApiError && err.status === 422;

  router.get('/', async (req, res) => {
    res.type('html').send(webhooksPage(ctx(req, { notice: notice(req) }), await rows(await ownWebhooks(db, who(req)))));
  });
  router.post('/webhooks', async (req, res) => {
    const f = form(req);
    try {
      const webhook = { url: f.url, webhook_secret: f.webhook_secret || undefined, custom_headers: headersFrom(f), event_types: eventTypesFrom(f) };
      const hook = await call<WebhookAnswer>(req, res, OPS.createWebhook, { body: { webhook } });
      back(res, `/portal/webhooks/${hook.id}`, 'Webhook added.');
    } catch (err) {
      if (!refusedForm(err)) throw err;
      res.status(err.status).type('html').send(webhooksPage(ctx(req, { errors: { message: err.message, details: err.errors } }), await rows(await ownWebhooks(db, who(req))), f));
    }
  });
  router.get('/webhooks/:id', async (req, res) => showWebhook(req, res, String(req.params.id), { notice: notice(req) }));
  router.post('/webhooks/:id', async (req, res) => {
    const f = form(req);
    const params = { id: String(req.params.id) };
    try {
      const hook = await call<WebhookAnswer>(req, res, OPS.getWebhook, { params });
      // Values are write-only in the form: an empty one keeps the header's current value.
      const changes: Record<string, unknown> = { custom_headers: headersFrom(f, hook.custom_headers) };
      if (f.remove_secret) changes.webhook_secret = null;
      else if (f.webhook_secret) changes.webhook_secret = f.webhook_secret;
      const eventTypes = eventTypesFrom(f);
      if (eventTypes !== undefined) changes.event_types = eventTypes;
      await call(req, res, OPS.updateWebhook, { params, body: changes });
      back(res, `/portal/webhooks/${params.id}`, 'Saved.');
    } catch (err) {
      if (!refusedForm(err)) throw err;
      await showWebhook(req, res, params.id, { errors: { message: err.message, details: err.errors } });
    }
  });
  router.post('/webhooks/:id/enable', async (req, res) => {
    await call(req, res, OPS.updateWebhook, { params: { id: String(req.params.id) } }); // an empty update re-enables
    back(res, `/portal/webhooks/${req.params.id}`, 'Re-enabled.');
  });
  router.post('/webhooks/:id/rotate', async (req, res) => {
    const rotated = await call<z.output<typeof WebhookSecret>>(req, res, OPS.rotateSecret, { params: { id: String(req.params.id) } });
    await showWebhook(req, res, rotated.webhook_id, { notice: 'Secret rotated.' }, { secret: rotated.webhook_secret, previousExpiresAt: rotated.previous_secret_expires_at });
  });
  // "Redeliver what failed since…": the API's recovery; times are UTC as the page shows them.
  router.post('/webhooks/:id/recover', async (req, res) => {
    const id = String(req.params.id);
    const since = form(req).since ?? '';
    try {
      const body = { since: /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/.test(since) ? `${since}Z` : since };
      const recovery = await call<RecoveryView>(req, res, OPS.recover, { params: { id }, body });
      back(res, `/portal/webhooks/${id}`, recovery.matched === 0
        ? `Nothing to redeliver: every event since ${since.replace('T', ' ')} UTC reached this webhook.`
        : `Redelivering ${recovery.matched} event${recovery.matched === 1 ? '' : 's'} that did not reach this webhook since ${since.replace('T', ' ')} UTC${recovery.capped ? ' (the oldest of more: recover the same window again once these are done)' : ''}.`);
    } catch (err) {
      if (!refusedForm(err)) throw err;
      // A disabled webhook: the API's answer names its PATCH; the page has the button (its notice, first on the page).
      const hook = await call<WebhookAnswer>(req, res, OPS.getWebhook, { params: { id } });
      const message = hook.disabled_at ? 'This webhook is disabled, so nothing can be redelivered to it: re-enable it with the Re-enable button just below, then redeliver.' : err.message;
      await showWebhook(req, res, id, { errors: { message, details: hook.disabled_at ? [] : err.errors } });
    }
  });
  router.post('/webhooks/:id/test', async (req, res) => {
    const description = form(req).description || undefined;
    const event = await call<z.output<typeof DeliveredEvent>>(req, res, OPS.sendTest, { params: { id: String(req.params.id) }, body: { description } });
    back(res, `/portal/events/${event.id}`, 'Test event sent.');
  });
  router.post('/webhooks/:id/delete', async (req, res) => {
    await call(req, res, OPS.deleteWebhook, { params: { id: String(req.params.id) } });
    back(res, '/portal/', 'Webhook deleted.');
  });

  router.get('/events', async (req, res) => {
    const q = req.query as Record<string, string | undefined>;
    const object = typeof q.object === 'string' ? q.object.trim() : '';
    // An event's own id goes to that event.
    if (hasPrefix(object, 'evt')) return res.redirect(303, `/portal/events/${object}`);
    // The page's own links carry these; a stale or hand-made value is dropped, not refused.
    const filter = {
      status: EVENT_STATUSES.find((s) => s === q.status),
      type: isEventType(q.type) ? q.type : undefined,
      object: object || undefined,
      before_id: typeof q.before_id === 'string' && hasPrefix(q.before_id, 'evt') ? q.before_id : undefined,
    };
    const query = { page_size: String(PAGE_SIZE), ...(filter.status ? { status: filter.status } : {}), ...(filter.type ? { description: filter.type } : {}), ...searchedFor(object), ...(filter.before_id ? { before_id: filter.before_id } : {}) };
    try {
      const list = await call<z.output<typeof EventList>>(req, res, OPS.listEvents, { query });
      res.type('html').send(eventsPage(ctx(req), list, filter));
    } catch (err) {
      // What was typed in the search box is refused with the API's reason.
      if (!refusedForm(err)) throw err;
      const errors = { message: 'Search for an object id (trk_…, shp_…, batch_…) or a tracking code.', details: err.errors };
      res.status(err.status).type('html').send(eventsPage(ctx(req, { errors }), { events: [], has_more: false }, filter));
    }
  });
  async function showEvent(req: Request, res: Response, id: string, extra: Partial<PageContext> = {}) {
    const params = { id };
    const [event, { payloads }, deliveries] = await Promise.all([
      call<z.output<typeof Event>>(req, res, OPS.getEvent, { params }),
      call<z.output<typeof PayloadList>>(req, res, OPS.payloads, { params }),
      deliveryProgress(db, who(req), params.id),
    ]);
    res.status(extra.errors ? 422 : 200).type('html').send(eventPage(ctx(req, extra), event, deliveries, config.retryDelaysMs.length + 1, [...payloads].reverse()));
  }
  router.get('/events/:id', async (req, res) => showEvent(req, res, String(req.params.id), { notice: notice(req) }));
  router.post('/events/:id/replay', async (req, res) => {
    const id = String(req.params.id);
    try {
      const event = await call<z.output<typeof Event>>(req, res, OPS.replay, { params: { id } });
      back(res, `/portal/events/${event.id}`, 'Replay started.');
    } catch (err) {
      if (!refusedForm(err)) throw err;
      // Nowhere live to deliver to: the API's answer names its PATCH; the webhook's page has the button.
      const noLiveWebhook = err.code === 'WEBHOOK.INVALID';
      const message = noLiveWebhook ? 'Nothing to replay to: the webhooks this event has not reached are disabled or deleted. Open a disabled one (its URL below) and re-enable it with the button at the top of its page, then replay.' : err.message;
      await showEvent(req, res, id, { errors: { message, details: noLiveWebhook ? [] : err.errors } });
    }
  });

  router.post('/logout', async (req, res) => {
    await endSession(db, req.portal!.token);
    res.setHeader('Set-Cookie', cookie(COOKIE, '', { httpOnly: true, sameSite: 'lax', secure: secure(req), path: '/portal', maxAge: 0 }));
    res.status(200).type('html').send(bare('Signed out', 'You are signed out of the portal.'));
  });

  router.use((_req, res) => {
    res.status(404).type('html').send(bare('Not found', 'There is no such page in the portal.'));
  });
  router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof ApiError && err.status === 404) {
      res.status(404).type('html').send(bare('Not found', 'There is no such webhook or event in this account and mode.'));
      return;
    }
    if (err instanceof ApiError && err.status < 500) {
      res.status(err.status).type('html').send(bare(err.status === 429 ? 'Too many requests' : 'Refused', `${err.message}${err.errors.length ? ` (${err.errors.map((e) => (typeof e === 'string' ? e : `${e.field}: ${e.message}`)).join('; ')})` : ''}`));
      return;
    }
    // The route's template, never its path: a login path holds the link's token.
    log.error('portal error', { route: routeTemplate(req, res), error: errorText(err, 300) });
    res.status(500).type('html').send(bare('Something went wrong', 'The portal could not do that; please try again.'));
  });
  return router;
}

/**
 * The events page's one search box: an object id has a lowercase prefix and an underscore
 * (`trk_…`, `shp_…`, `batch_…`), which no carrier's tracking code has.
 */
function searchedFor(value: string): { object_id?: string; tracking_code?: string } {
  if (!value) return {};
  return /^[a-z]+_/.test(value) ? { object_id: value } : { tracking_code: value };
}

/** What the operations the portal calls answer: their declared response schemas. */
type WebhookAnswer = z.output<typeof Webhook>;
type HealthAnswer = z.output<typeof WebhookHealth>;
