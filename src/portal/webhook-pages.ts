import { acknowledges } from '../events/payloads';
import { errorText } from '../errors/error-text';
import type { HealthState } from '../webhooks/tables';
import { EVENT_TYPES } from '../events/types';
import type { HourOfAttempts, RecentAttempt } from '../webhooks/delivery-history';
import { breakableUrl, type Html, html } from './html';
import { emptyBodyText } from '../webhooks/health-view';
import { successChart } from './chart';
import { headerFields, headerNamesOf } from './header-form';
import { eventTypeFields, receivesText, selectionFromForm, selectionOf } from './event-types-form';
import { formGuards, page, type PageContext, when } from './layout';

/** The portal's webhook pages: the list with the form to add one, and one webhook with its health and actions. */
export interface WebhookRowView {
  id: string;
  url: string;
  created_at: string;
  disabled_at: string | null;
  headerNames: string[];
  /** Its subscription as stored: null receives every type. */
  eventTypes: string[] | null;
  health: {
    status: HealthState;
    consecutive_failures: number;
    failing_since: string | null;
    last_success_at: string | null;
    last_error: string | null;
    last_failure_response_code: number | null;
    last_24h: { attempts: number; succeeded: number; failed: number };
    /** Why it was disabled, and under which policy, where the health view states it. */
    disabled_reason?: string | null;
    disabled_policy?: { failures: number; after: string } | null;
  };
}

export function webhooksPage(ctx: PageContext, hooks: WebhookRowView[], form: Record<string, string> = {}): string {
  const total = hooks.reduce((t, h) => ({ attempts: t.attempts + h.health.last_24h.attempts, failed: t.failed + h.health.last_24h.failed }), { attempts: 0, failed: 0 });
  return page(ctx, 'Webhooks', html`
<h1>Webhooks</h1>
<section aria-labelledby="glance">
  <h2 id="glance">Last 24 hours</h2>
  <dl class="numbers">
    <div><dt>Delivery attempts</dt><dd>${total.attempts}</dd></div>
    <div><dt>Succeeded</dt><dd>${total.attempts - total.failed}</dd></div>
    <div><dt>Failed</dt><dd>${total.failed}</dd></div>
    <div><dt>Webhooks</dt><dd>${hooks.length}</dd></div>
  </dl>
</section>
<section aria-labelledby="list">
  <h2 id="list">Endpoints</h2>
  ${hooks.length === 0 ? html`<p>No webhooks yet: add one below.</p>` : html`
  <div class="scroll" tabindex="0" role="region" aria-label="Webhooks table">
  <table class="cards">
    <thead><tr><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Last success</th><th scope="col">Failures in a row</th><th scope="col">Last error</th><th scope="col">Custom headers</th><th scope="col">24 h attempts / failed</th><th scope="col">Created</th></tr></thead>
    <tbody>${hooks.map((h) => html`
      <tr>
        <th scope="row"><a class="url" href="/portal/webhooks/${h.id}">${breakableUrl(h.url)}</a><span class="receives hint">receives ${receivesText(h.eventTypes, 3)}</span></th>
        <td data-label="Status"><span class="badge ${h.health.status}">${h.disabled_at ? 'disabled' : h.health.status}</span></td>
        <td data-label="Last success">${when(h.health.last_success_at)}</td>
        <td data-label="Failures in a row">${h.health.consecutive_failures}${h.health.failing_since ? html` since ${when(h.health.failing_since)}` : ''}</td>
        <td data-label="Last error">${lastError(h.health, 80)}</td>
        <td data-label="Custom headers">${h.headerNames.length ? h.headerNames.join(', ') : '—'}</td>
        <td data-label="24 h attempts / failed">${h.health.last_24h.attempts} / ${h.health.last_24h.failed}</td>
        <td data-label="Created">${when(h.created_at)}</td>
      </tr>`)}
    </tbody>
  </table>
  </div>`}
</section>
<section aria-labelledby="create">
  <h2 id="create">Add a webhook</h2>
  <form method="post" action="/portal/webhooks" class="stack">
    ${formGuards(ctx)}
    <label for="url">URL</label>
    <input id="url" name="url" type="url" required value="${form.url ?? ''}" placeholder="https://example.com/webhooks" autocomplete="off">
    <label for="webhook_secret">Secret <span class="hint">(optional; signs every delivery)</span></label>
    <input id="webhook_secret" name="webhook_secret" type="password" autocomplete="off">
    ${headerFields(headerNamesOf(form))}
    ${eventTypeFields(selectionFromForm(form))}
    <button type="submit">Add webhook</button>
  </form>
</section>`);
}

/** What the webhook page shows besides the webhook: its recent attempts and its hours of the health window. */
export interface WebhookActivity {
  recent: RecentAttempt[];
  hours: HourOfAttempts[];
}

export function webhookPage(ctx: PageContext, hook: WebhookRowView, activity: WebhookActivity, newSecret?: { secret: string; previousExpiresAt: string | null }): string {
  const health = hook.health;
  return page(ctx, hook.url, html`
<p><a href="/portal/">← All webhooks</a></p>
<h1 class="url">${breakableUrl(hook.url)}</h1>
${hook.disabled_at ? disabledNotice(ctx, hook) : ''}
${newSecret ? html`<section class="secret" aria-labelledby="newsecret"><h2 id="newsecret">New signing secret</h2>
  <p>Copy it now: it is shown this once.</p><p><output id="secret-value" class="code">${newSecret.secret}</output></p>
  ${newSecret.previousExpiresAt ? html`<p>The previous secret keeps signing deliveries (beside this one, in <code>webhook-signature</code>) until ${when(newSecret.previousExpiresAt)}.</p>` : ''}</section>` : ''}
<section aria-labelledby="health"><h2 id="health">Health</h2>
<dl class="facts">
  <dt>Status</dt><dd><span class="badge ${health.status}">${hook.disabled_at ? 'disabled' : health.status}</span>${hook.disabled_at ? html` since ${when(hook.disabled_at)}` : ''}</dd>
  <dt>Receives</dt><dd>${receivesText(hook.eventTypes)}</dd>
  <dt>Last success</dt><dd>${when(health.last_success_at)}</dd>
  <dt>Failures in a row</dt><dd>${health.consecutive_failures}${health.failing_since ? html`, failing since ${when(health.failing_since)}` : ''}</dd>
  <dt>Last error</dt><dd>${lastError(health)}</dd>
  <dt>Last 24 hours</dt><dd>${health.last_24h.attempts} attempts, ${health.last_24h.failed} failed</dd>
  <dt>Created</dt><dd>${when(hook.created_at)}</dd>
</dl>
</section>
<section aria-labelledby="rate"><h2 id="rate">Success rate, last 24 hours</h2>
${successChart(activity.hours)}
</section>
<section aria-labelledby="recent"><h2 id="recent">Recent deliveries</h2>
${activity.recent.length === 0 ? html`<p>No delivery attempts yet.</p>` : html`
<p class="hint">The last ${activity.recent.length} attempts to this webhook, newest first.</p>
<table class="cards">
  <thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Response</th><th scope="col">Duration</th></tr></thead>
  <tbody>${activity.recent.map((a) => html`<tr>
    <th scope="row">${when(a.created_at)}</th>
    <td data-label="Event"><a class="code" href="/portal/events/${a.event_id}">${a.event_id}</a></td>
    <td data-label="Response"><span class="badge ${acknowledges(a.response_code) ? 'completed' : 'failed'}">${a.response_code || 'no response'}</span></td>
    <td data-label="Duration">${a.total_time} ms</td>
  </tr>`)}</tbody>
</table>`}
</section>
<section aria-labelledby="recover"><h2 id="recover">Redeliver what failed</h2>
<p>Delivers again to this webhook every event since the time you give whose delivery to it did not succeed (failed, or still retrying), and those it missed while disabled. Nothing is sent twice to a URL that acknowledged it.</p>
${hook.disabled_at ? html`<p class="hint">This webhook is disabled: re-enable it first, with the <a href="#disabled">Re-enable button at the top of this page</a>.</p>` : ''}
<form method="post" action="/portal/webhooks/${hook.id}/recover" class="row">${formGuards(ctx)}
  <label for="since">Redeliver what failed since <span class="hint">(UTC)</span></label>
  <input id="since" name="since" type="datetime-local" required value="${recoverFrom(health)}">
  <button type="submit">Redeliver</button>
</form></section>
<section aria-labelledby="test"><h2 id="test">Send a test event</h2>
<form method="post" action="/portal/webhooks/${hook.id}/test" class="row">${formGuards(ctx)}
  <label for="description">Event type</label>
  <select id="description" name="description">${EVENT_TYPES.map((t) => html`<option${t === 'tracker.updated' ? html` selected` : ''}>${t}</option>`)}</select>
  <button type="submit">Send test event</button>
</form></section>
<section aria-labelledby="edit"><h2 id="edit">Edit</h2>
<form method="post" action="/portal/webhooks/${hook.id}" class="stack">${formGuards(ctx)}
  <label for="webhook_secret">New secret <span class="hint">(blank keeps the current one)</span></label>
  <input id="webhook_secret" name="webhook_secret" type="password" autocomplete="off">
  <label class="check"><input type="checkbox" name="remove_secret" value="1"> Remove the secret (deliveries are not signed)</label>
  ${headerFields(hook.headerNames)}
  ${eventTypeFields(selectionOf(hook.eventTypes))}
  <button type="submit">Save</button>
</form></section>
<section aria-labelledby="rotate"><h2 id="rotate">Rotate the secret</h2>
<p>A new secret is generated and shown once; the current one keeps signing beside it for a grace period, so your endpoint can switch without missing a delivery.</p>
<form method="post" action="/portal/webhooks/${hook.id}/rotate">${formGuards(ctx)}<button type="submit">Rotate secret</button></form></section>
<section aria-labelledby="delete"><h2 id="delete">Delete</h2>
<form method="post" action="/portal/webhooks/${hook.id}/delete" class="row">${formGuards(ctx)}
  <label class="check"><input type="checkbox" name="confirm" value="1" required> Yes, delete this webhook</label>
  <button type="submit" class="danger">Delete webhook</button>
</form></section>`);
}

/**
 * The last failed attempt: the status code before the endpoint's own body (cut to `max`
 * in a table, whole in a block otherwise); the health view's own words ("HTTP 500, empty
 * body", "no response: …") as they are.
 */
function lastError(health: WebhookRowView['health'], max?: number): Html | string {
  const { last_error: text, last_failure_response_code: code } = health;
  if (text === null) return '—';
  if (!code || text === emptyBodyText(code)) return text;
  return html`<span class="code">${code}</span> ${max ? errorText(text, max) : html`<pre>${text}</pre>`}`;
}

/** The form's first guess: when the current run of failures began, else a day ago (UTC, as datetime-local takes it). */
function recoverFrom(health: WebhookRowView['health']): string {
  const from = health.failing_since ? new Date(health.failing_since) : new Date(Date.now() - 86_400_000);
  return from.toISOString().slice(0, 16);
}

/**
 * A disabled webhook's notice, first on its page with its Re-enable button: on a phone
 * the page is long (the recent deliveries are a card each), and a refused redelivery
 * shows the page again from its top, so the button is where the customer is then.
 */
function disabledNotice(ctx: PageContext, hook: WebhookRowView) {
  return html`<section class="disabled" id="disabled" aria-labelledby="disabled-title">
<h2 id="disabled-title">Disabled since ${when(hook.disabled_at)}</h2>
<p>${hook.health.disabled_reason ? html`${disabledBecause(hook.health)} ` : ''}Nothing is sent to it, not even retries, until it is re-enabled; then redeliver what it missed (below).</p>
<form method="post" action="/portal/webhooks/${hook.id}/enable">${formGuards(ctx)}<button type="submit">Re-enable</button></form>
</section>`;
}

/** The health view's disabled_reason in words (an unknown reason is shown as it is). */
function disabledBecause(health: WebhookRowView['health']): string {
  const policy = health.disabled_policy;
  switch (health.disabled_reason) {
    case 'endpoint_gone':
      return 'The endpoint answered 410 Gone, which asks for deliveries to stop.';
    case 'sustained_failures':
      return policy ? `Deliveries failed ${policy.failures} times in a row over at least ${policy.after}.` : 'Deliveries kept failing.';
    case 'operator':
      return 'An operator disabled it.';
    default:
      return String(health.disabled_reason);
  }
}
