import { randomUUID } from 'node:crypto';
import type { Mode } from '../account/tables';
import type { ErrorDetail } from '../errors/api-error';
import { Html, html } from './html';

/**
 * The portal's page frame and the pieces every page shares. Plain HTML forms and
 * links — no script at all, so a page works with a strict Content-Security-Policy,
 * with the keyboard, with a screen reader and at any width. Every value comes
 * through `html`, which escapes it.
 */
export interface PageContext {
  mode: Mode;
  csrf: string;
  notice?: string;
  errors?: { message: string; details: ErrorDetail[] };
}

export function page(ctx: PageContext, title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · shiphook webhooks</title>
<link rel="stylesheet" href="/portal/assets/portal.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
  <nav aria-label="Portal">
    <span class="brand">shiphook webhooks</span>
    <span class="mode" title="API mode of this portal session">${ctx.mode} mode</span>
    <a href="/portal/">Webhooks</a>
    <a href="/portal/events">Events</a>
    <form method="post" action="/portal/logout" class="inline">${formGuards(ctx)}<button type="submit" class="link">Sign out</button></form>
  </nav>
</header>
<main id="main">
${ctx.notice ? html`<p class="notice" role="status">${ctx.notice}</p>` : ''}
${ctx.errors ? errorBox(ctx.errors) : ''}
${body}
</main>
</body>
</html>`.text;
}

/** A page outside a session (a refused link): no navigation, no forms. */
export function bare(title: string, message: string | Html): string {
  return html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · shiphook webhooks</title><link rel="stylesheet" href="/portal/assets/portal.css"></head>
<body><main id="main"><h1>${title}</h1><p>${message}</p></main></body>
</html>`.text;
}

function errorBox(errors: NonNullable<PageContext['errors']>): Html {
  return html`<div class="error" role="alert"><p>${errors.message}</p>${
    errors.details.length ? html`<ul>${errors.details.map((d) => html`<li>${typeof d === 'string' ? d : html`<code>${d.field}</code> ${d.message}`}</li>`)}</ul>` : ''
  }</div>`;
}

/** The form field that carries a form's Idempotency-Key (portal/router.ts). */
export const IDEMPOTENCY_FIELD = '_idempotency_key';

/**
 * The hidden fields of every form: the session's CSRF token, and an Idempotency-Key of
 * this form's own, so a form submitted twice (a double click, a resend) is answered once
 * by the operations declared idempotent.
 */
export const formGuards = (ctx: PageContext) =>
  html`<input type="hidden" name="_csrf" value="${ctx.csrf}"><input type="hidden" name="${IDEMPOTENCY_FIELD}" value="${randomUUID()}">`;

export function when(iso: string | null | undefined): Html | string {
  return iso ? html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/(\.\d+)?(Z|\+00:00)$/, ' UTC')}</time>` : '—';
}
