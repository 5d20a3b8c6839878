import type { HealthState } from '../webhooks/tables';
import { EVENT_TYPES } from '../events/types';
import { Html, html } from './html';
import { csrfField, page, type PageContext, when } from './layout';

/** The portal's webhook pages: the list with the form to add one, and one webhook with its health and actions. */
export interface WebhookRowView {
  id: string;
  url: string;
  created_at: string;
  disabled_at: string | null;
  headerNames: string[];
  health: {
    status: HealthState;
    consecutive_failures: number;
    failing_since: string | null;
    last_success_at: string | null;
    last_error: string | null;
    last_failure_response_code: number | null;
    last_24h: { attempts: number; succeeded: number; failed: number };
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
  <table>
    <thead><tr><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Last success</th><th scope="col">Failures in a row</th><th scope="col">Last error</th><th scope="col">Custom headers</th><th scope="col">24 h attempts / failed</th><th scope="col">Created</th></tr></thead>
    <tbody>${hooks.map((h) => html`
      <tr>
        <th scope="row"><a href="/portal/webhooks/${h.id}">${h.url}</a></th>
        <td><span class="badge ${h.health.status}">${h.disabled_at ? 'disabled' : h.health.status}</span></td>
        <td>${when(h.health.last_success_at)}</td>
        <td>${h.health.consecutive_failures}${h.health.failing_since ? html` since ${when(h.health.failing_since)}` : ''}</td>
        <td>${h.health.last_error ? html`<span class="code">${h.health.last_failure_response_code || 'no response'}</span> ${truncate(h.health.last_error, 80)}` : '—'}</td>
        <td>${h.headerNames.length ? h.headerNames.join(', ') : '—'}</td>
        <td>${h.health.last_24h.attempts} / ${h.health.last_24h.failed}</td>
        <td>${when(h.created_at)}</td>
      </tr>`)}
    </tbody>
  </table>
  </div>`}
</section>
<section aria-labelledby="create">
  <h2 id="create">Add a webhook</h2>
  <form method="post" action="/portal/webhooks" class="stack">
    ${csrfField(ctx)}
    <label for="url">URL</label>
    <input id="url" name="url" type="url" required value="${form.url ?? ''}" placeholder="https://example.com/webhooks" autocomplete="off">
    <label for="webhook_secret">Secret <span class="hint">(optional; signs every delivery)</span></label>
    <input id="webhook_secret" name="webhook_secret" type="password" autocomplete="off">
    ${headerFields(form)}
    <button type="submit">Add webhook</button>
  </form>
</section>`);
}

function headerFields(form: Record<string, string>): Html {
  return html`<fieldset><legend>Custom headers <span class="hint">(at most 3; sent with every delivery)</span></legend>
    ${[0, 1, 2].map((i) => html`<div class="pair">
      <label for="header_name_${i}">Name ${i + 1}</label><input id="header_name_${i}" name="header_name_${i}" value="${form[`header_name_${i}`] ?? ''}" autocomplete="off">
      <label for="header_value_${i}">Value ${i + 1}</label><input id="header_value_${i}" name="header_value_${i}" value="${form[`header_value_${i}`] ?? ''}" autocomplete="off">
    </div>`)}
  </fieldset>`;
}

export function webhookPage(ctx: PageContext, hook: WebhookRowView, headers: { name: string; value: string }[], newSecret?: { secret: string; previousExpiresAt: string | null }): string {
  const form: Record<string, string> = {};
  headers.forEach((h, i) => { form[`header_name_${i}`] = h.name; form[`header_value_${i}`] = h.value; });
  const health = hook.health;
  return page(ctx, hook.url, html`
<p><a href="/portal/">← All webhooks</a></p>
<h1 class="url">${hook.url}</h1>
${newSecret ? html`<section class="secret" aria-labelledby="newsecret"><h2 id="newsecret">New signing secret</h2>
  <p>Copy it now: it is shown this once.</p><p><output id="secret-value" class="code">${newSecret.secret}</output></p>
  ${newSecret.previousExpiresAt ? html`<p>The previous secret keeps signing deliveries (beside this one, in <code>webhook-signature</code>) until ${when(newSecret.previousExpiresAt)}.</p>` : ''}</section>` : ''}
<section aria-labelledby="health"><h2 id="health">Health</h2>
<dl class="facts">
  <dt>Status</dt><dd><span class="badge ${health.status}">${hook.disabled_at ? 'disabled' : health.status}</span>${hook.disabled_at ? html` since ${when(hook.disabled_at)}` : ''}</dd>
  <dt>Last success</dt><dd>${when(health.last_success_at)}</dd>
  <dt>Failures in a row</dt><dd>${health.consecutive_failures}${health.failing_since ? html`, failing since ${when(health.failing_since)}` : ''}</dd>
  <dt>Last error</dt><dd>${health.last_error ? html`<span class="code">${health.last_failure_response_code || 'no response'}</span> <pre>${health.last_error}</pre>` : '—'}</dd>
  <dt>Last 24 hours</dt><dd>${health.last_24h.attempts} attempts, ${health.last_24h.failed} failed</dd>
  <dt>Created</dt><dd>${when(hook.created_at)}</dd>
</dl>
${hook.disabled_at ? html`<form method="post" action="/portal/webhooks/${hook.id}/enable">${csrfField(ctx)}<button type="submit">Re-enable</button></form>` : ''}
</section>
<section aria-labelledby="test"><h2 id="test">Send a test event</h2>
<form method="post" action="/portal/webhooks/${hook.id}/test" class="row">${csrfField(ctx)}
  <label for="description">Event type</label>
  <select id="description" name="description">${EVENT_TYPES.map((t) => html`<option${t === 'tracker.updated' ? html` selected` : ''}>${t}</option>`)}</select>
  <button type="submit">Send test event</button>
</form></section>
<section aria-labelledby="edit"><h2 id="edit">Edit</h2>
<form method="post" action="/portal/webhooks/${hook.id}" class="stack">${csrfField(ctx)}
  <label for="webhook_secret">New secret <span class="hint">(blank keeps the current one)</span></label>
  <input id="webhook_secret" name="webhook_secret" type="password" autocomplete="off">
  <label class="check"><input type="checkbox" name="remove_secret" value="1"> Remove the secret (deliveries are not signed)</label>
  ${headerFields(form)}
  <button type="submit">Save</button>
</form></section>
<section aria-labelledby="rotate"><h2 id="rotate">Rotate the secret</h2>
<p>A new secret is generated and shown once; the current one keeps signing beside it for a grace period, so your endpoint can switch without missing a delivery.</p>
<form method="post" action="/portal/webhooks/${hook.id}/rotate">${csrfField(ctx)}<button type="submit">Rotate secret</button></form></section>
<section aria-labelledby="delete"><h2 id="delete">Delete</h2>
<form method="post" action="/portal/webhooks/${hook.id}/delete" class="row">${csrfField(ctx)}
  <label class="check"><input type="checkbox" name="confirm" value="1" required> Yes, delete this webhook</label>
  <button type="submit" class="danger">Delete webhook</button>
</form></section>`);
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
