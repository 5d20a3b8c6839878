import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse as parseCookies, serialize as cookie } from 'cookie';
import express, { type NextFunction, type Request, type Response, Router } from 'express';
import helmet from 'helmet';
import { EVENT_STATUSES } from '../events/tables';
import type { Db } from '../db/database';
import type { TemporalDeps } from '../engine/client';
import { replayEvent, startRecovery } from '../engine/replay';
import { healthWorkflows } from '../engine/starters';
import { recoverWebhook } from '../webhooks/recovery';
import { RECOVER_INPUT, RecoverBody } from '../webhooks/recovery.schema';
import { isEventType } from '../events/types';
import { eventSummary, listEvents, ownEvent } from '../events/events';
import { listPayloads } from '../events/payloads';
import { deliveryProgress } from '../events/deliveries';
import { endSession, exchangeLink, sessionPrincipal } from '../portal-sessions/portal-sessions';
import type { Principal } from '../account/principal';
import { sendTestEvent } from '../webhooks/test-events';
import { healthOf } from '../webhooks/health-view';
import { rotateSecret } from '../webhooks/secret-rotation';
import type { WebhookRow } from '../webhooks/tables';
import { createWebhook, deleteWebhook, ownWebhook, ownWebhooks, updateWebhook, webhookView } from '../webhooks/webhooks';
import { ApiError } from '../errors/api-error';
import { parseInput } from '../schema';
import { TEST_EVENT_INPUT, TestEventBody, UpdateWebhookBody, WEBHOOK_INPUT, WebhookCreate } from '../webhooks/webhooks.schema';
import { log } from '../log';
import { routeTemplate } from '../api/http-metrics';
import { hourlyAttempts, recentAttempts } from '../webhooks/delivery-history';
import { eventPage, eventsPage } from './event-pages';
import { headersFrom } from './header-form';
import { html } from './html';
import { bare, type PageContext } from './layout';
import { webhookPage, type WebhookRowView, webhooksPage } from './webhook-pages';

/**
 * The customer webhook portal, served by the api under /portal: server-rendered pages
 * over the same domain functions as the API (no second set of rules), scoped by the
 * portal session's user and mode. A portal link (POST /v2/portal_sessions) works once:
 * its first visit opens a session held in an HttpOnly, SameSite=Lax cookie and sends
 * the browser on without the token in its address bar; every form carries a CSRF token
 * derived from the session, and every page a strict Content-Security-Policy (no script
 * at all, no inline style).
 */
const COOKIE = 'shiphook_portal';
const CSS = readFileSync(new URL('./assets/portal.css', import.meta.url), 'utf8');
const PAGE_SIZE = 25;

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

export function portalRouter(deps: TemporalDeps & { db: Db }): Router {
  const { db, config } = deps;
  // Re-enable and delete tell the webhook's health workflow, as the API's do.
  const health = healthWorkflows(deps);
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
  router.use(express.urlencoded({ extended: false, limit: '64kb' }));
  // CSRF: every form posts the session's token; the cookie is SameSite=Strict besides.
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

  async function rows(hooks: WebhookRow[]): Promise<WebhookRowView[]> {
    const health = await healthOf(db, hooks);
    return hooks.map((row) => {
      const h = webhookView(row); // masked, as everywhere
      return { id: h.id, url: h.url, created_at: h.created_at, disabled_at: h.disabled_at, headerNames: h.custom_headers.map((c) => c.name), health: health.get(h.id)! };
    });
  }
  async function showWebhook(req: Request, res: Response, id: string, extra: Partial<PageContext> = {}, newSecret?: { secret: string; previousExpiresAt: string | null }) {
    const row = await ownWebhook(db, who(req), id);
    const [[view], recent, hours] = await Promise.all([rows([row]), recentAttempts(db, who(req), row.id), hourlyAttempts(db, who(req), row.id)]);
    res.status(extra.errors ? 422 : 200).type('html').send(webhookPage(ctx(req, extra), view!, { recent, hours }, newSecret));
  }
  const notice = (req: Request) => (typeof req.query.notice === 'string' ? req.query.notice.slice(0, 200) : undefined);
  const back = (res: Response, path: string, message: string) => res.redirect(303, `${path}?notice=${encodeURIComponent(message)}`);

  router.get('/', async (req, res) => {
    res.type('html').send(webhooksPage(ctx(req, { notice: notice(req) }), await rows(await ownWebhooks(db, who(req)))));
  });
  router.post('/webhooks', async (req, res) => {
    const f = form(req);
    try {
      const input = parseInput(WebhookCreate, { url: f.url, webhook_secret: f.webhook_secret || undefined, custom_headers: headersFrom(f) }, WEBHOOK_INPUT);
      const hook = await createWebhook(db, config, who(req), input);
      back(res, `/portal/webhooks/${hook.id}`, 'Webhook added.');
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      res.status(err.status).type('html').send(webhooksPage(ctx(req, { errors: { message: err.message, details: err.errors } }), await rows(await ownWebhooks(db, who(req))), f));
    }
  });
  router.get('/webhooks/:id', async (req, res) => showWebhook(req, res, String(req.params.id), { notice: notice(req) }));
  router.post('/webhooks/:id', async (req, res) => {
    const f = form(req);
    const id = String(req.params.id);
    try {
      const hook = await ownWebhook(db, who(req), id);
      // Values are write-only in the form: an empty one keeps the header's current value.
      const changes: Record<string, unknown> = { custom_headers: headersFrom(f, hook.custom_headers) };
      if (f.remove_secret) changes.webhook_secret = null;
      else if (f.webhook_secret) changes.webhook_secret = f.webhook_secret;
      await updateWebhook(db, who(req), hook, parseInput(UpdateWebhookBody, changes, WEBHOOK_INPUT), health);
      back(res, `/portal/webhooks/${id}`, 'Saved.');
    } catch (err) {
      if (!(err instanceof ApiError) || err.code === 'NOT_FOUND') throw err;
      await showWebhook(req, res, id, { errors: { message: err.message, details: err.errors } });
    }
  });
  router.post('/webhooks/:id/enable', async (req, res) => {
    await updateWebhook(db, who(req), await ownWebhook(db, who(req), String(req.params.id)), {}, health);
    back(res, `/portal/webhooks/${req.params.id}`, 'Re-enabled.');
  });
  router.post('/webhooks/:id/rotate', async (req, res) => {
    const rotated = await rotateSecret(db, config, who(req), String(req.params.id));
    await showWebhook(req, res, rotated.webhook_id, { notice: 'Secret rotated.' }, { secret: rotated.webhook_secret, previousExpiresAt: rotated.previous_secret_expires_at });
  });
  // "Redeliver what failed since…": the API's recovery (same rules, same engine); times are UTC as the page shows them.
  router.post('/webhooks/:id/recover', async (req, res) => {
    const id = String(req.params.id);
    const since = form(req).since ?? '';
    try {
      const window = parseInput(RecoverBody, { since: /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/.test(since) ? `${since}Z` : since }, RECOVER_INPUT);
      const recovery = await recoverWebhook(db, config, who(req), id, window, startRecovery);
      back(res, `/portal/webhooks/${id}`, recovery.matched === 0
        ? `Nothing to redeliver: every event since ${since.replace('T', ' ')} UTC reached this webhook.`
        : `Redelivering ${recovery.matched} event${recovery.matched === 1 ? '' : 's'} that did not reach this webhook since ${since.replace('T', ' ')} UTC${recovery.capped ? ' (the oldest of more: recover the same window again once these are done)' : ''}.`);
    } catch (err) {
      if (!(err instanceof ApiError) || err.code === 'NOT_FOUND') throw err;
      await showWebhook(req, res, id, { errors: { message: err.message, details: err.errors } });
    }
  });
  router.post('/webhooks/:id/test', async (req, res) => {
    const { description } = parseInput(TestEventBody, { description: form(req).description || undefined }, TEST_EVENT_INPUT);
    const event = await sendTestEvent(db, who(req), String(req.params.id), description);
    back(res, `/portal/events/${event.id}`, 'Test event sent.');
  });
  router.post('/webhooks/:id/delete', async (req, res) => {
    await deleteWebhook(db, who(req), String(req.params.id), health);
    back(res, '/portal/', 'Webhook deleted.');
  });

  router.get('/events', async (req, res) => {
    const q = req.query as Record<string, string | undefined>;
    const status = EVENT_STATUSES.find((s) => s === q.status);
    const type = isEventType(q.type) ? q.type : undefined;
    const beforeId = typeof q.before_id === 'string' && /^evt_[0-9a-f]{32}$/.test(q.before_id) ? q.before_id : undefined;
    const list = await listEvents(db, who(req), { pageSize: PAGE_SIZE, beforeId }, { status, description: type });
    res.type('html').send(eventsPage(ctx(req), list, { status, type, before_id: beforeId }));
  });
  router.get('/events/:id', async (req, res) => {
    const event = eventSummary(await ownEvent(db, who(req), String(req.params.id)));
    const [{ payloads }, deliveries] = await Promise.all([listPayloads(db, who(req), event.id), deliveryProgress(db, who(req), event.id)]);
    res.type('html').send(eventPage(ctx(req, { notice: notice(req) }), event, deliveries, config.retryDelaysMs.length + 1, [...payloads].reverse()));
  });
  router.post('/events/:id/replay', async (req, res) => {
    const event = await ownEvent(db, who(req), String(req.params.id)); // scoped: someone else's is 404
    await replayEvent(db, deps, event.id);
    back(res, `/portal/events/${event.id}`, 'Replay started.');
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
      res.status(err.status).type('html').send(bare('Refused', `${err.message}${err.errors.length ? ` (${err.errors.map((e) => (typeof e === 'string' ? e : `${e.field}: ${e.message}`)).join('; ')})` : ''}`));
      return;
    }
    // The route's template, never its path: a login path holds the link's token.
    log.error('portal error', { route: routeTemplate(req, res), error: String((err as Error)?.message ?? err).slice(0, 300) });
    res.status(500).type('html').send(bare('Something went wrong', 'The portal could not do that; please try again.'));
  });
  return router;
}
