import { acknowledges } from '../events/payloads';
import { EVENT_STATUSES, type EventStatus } from '../events/tables';
import { EVENT_TYPES } from '../events/types';
import type { DeliveryProgress } from '../events/deliveries';
import { BRAND_PREFIX, RESERVED_HEADERS } from '../webhooks/custom-headers';
import { breakableUrl, Html, html } from './html';
import { formGuards, page, type PageContext, when } from './layout';

/** The portal's event pages: the filtered list, and one event with its delivery attempts. */
export interface EventListView {
  events: { id: string; description: string; status: EventStatus; created_at: string }[];
  has_more: boolean;
}

/** `object`: the search box's value, an object id or a tracking code (portal/router.ts tells which). */
export function eventsPage(ctx: PageContext, list: EventListView, filter: { status?: string; type?: string; object?: string; before_id?: string }): string {
  const query = (extra: Record<string, string | undefined>) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries({ object: filter.object, status: filter.status, type: filter.type, ...extra })) if (v) q.set(k, v);
    const text = q.toString();
    return `/portal/events${text ? `?${text}` : ''}`;
  };
  return page(ctx, 'Events', html`
<h1>Events</h1>
<form method="get" action="/portal/events" class="row" aria-label="Filter events">
  <label for="object">Object id or tracking code</label>
  <input type="search" id="object" name="object" value="${filter.object ?? ''}" maxlength="100" size="36" placeholder="trk_… or EZ4000000004" autocomplete="off" spellcheck="false" autocapitalize="off">
  <span class="check"><label for="status">Status</label><select id="status" name="status"><option value="">any</option>${EVENT_STATUSES.map((s) => html`<option${filter.status === s ? html` selected` : ''}>${s}</option>`)}</select></span>
  <span class="check"><label for="type">Type</label><select id="type" name="type"><option value="">any</option>${EVENT_TYPES.map((t) => html`<option${filter.type === t ? html` selected` : ''}>${t}</option>`)}</select></span>
  <button type="submit">Filter</button>
</form>
${list.events.length === 0 ? html`<p>No events${filter.status || filter.type || filter.object ? ' match' : ' yet'}.</p>` : html`
<div class="scroll" tabindex="0" role="region" aria-label="Events table">
<table class="cards">
  <thead><tr><th scope="col">Event</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
  <tbody>${list.events.map((e) => html`<tr><th scope="row"><a class="code" href="/portal/events/${e.id}">${e.id}</a></th><td data-label="Type">${e.description}</td><td data-label="Status"><span class="badge ${e.status}">${e.status}</span></td><td data-label="Created">${when(e.created_at)}</td></tr>`)}</tbody>
</table></div>`}
<nav class="pages" aria-label="Pages">
  ${filter.before_id ? html`<a href="${query({})}">Newest</a>` : ''}
  ${list.has_more ? html`<a href="${query({ before_id: list.events.at(-1)!.id })}">Older events →</a>` : ''}
</nav>`);
}

export interface AttemptView {
  id: string;
  created_at: string;
  /** As its request said: counts from 1 again in each replay or recovery; null on attempts recorded before it was kept. */
  attempt: number | null;
  request_url: string;
  request_headers: Record<string, string>;
  request_body: string;
  response_code: number;
  response_headers: Record<string, string>;
  response_body: string;
  total_time: number;
}

export function eventPage(
  ctx: PageContext,
  event: { id: string; description: string; status: EventStatus; created_at: string; updated_at: string },
  deliveries: DeliveryProgress[],
  /** Attempts the retry schedule allows each URL: the first and one per retry delay. */
  totalAttempts: number,
  attempts: AttemptView[],
): string {
  return page(ctx, event.id, html`
<p><a href="/portal/events">← All events</a></p>
<h1>${event.description} <span class="badge ${event.status}">${event.status}</span></h1>
<dl class="facts">
  <dt>Event</dt><dd class="code">${event.id}</dd>
  <dt>Created</dt><dd>${when(event.created_at)}</dd>
  <dt>Updated</dt><dd>${when(event.updated_at)}</dd>
</dl>
<h2>Deliveries</h2>
${deliveries.length === 0 ? html`<p>No webhook to deliver to.</p>` : html`
<table class="cards deliveries">
  <thead><tr><th scope="col">URL</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">Next retry</th></tr></thead>
  <tbody>${deliveries.map((d) => html`<tr>
    <th scope="row" class="url"><a href="/portal/webhooks/${d.webhook_id}">${breakableUrl(d.url)}</a></th>
    <td data-label="State"><span class="badge ${d.state}">${d.state === 'pending' ? 'pending' : d.state === 'completed' ? 'delivered' : 'gave up'}</span></td>
    <td data-label="Attempts">${attemptsText(d)} <span class="hint">(${d.runs > 1 ? `first delivery and ${d.runs - 1} redeliver${d.runs === 2 ? 'y' : 'ies'}, up to ${totalAttempts} attempts each` : `up to ${totalAttempts}`})</span></td>
    <td data-label="Next retry">${d.next_attempt_at ? html`${when(d.next_attempt_at)} <span class="hint">(${d.runs > 1 ? `${runName(d.runs)}, ` : ''}attempt ${d.attempts + 1} of ${totalAttempts})</span>` : '—'}</td>
  </tr>`)}</tbody>
</table>`}
<form method="post" action="/portal/events/${event.id}/replay">${formGuards(ctx)}<button type="submit">Replay</button> <span class="hint">delivers again to the URLs not yet acknowledged: a redelivery, with up to ${totalAttempts} attempts of its own</span></form>
<h2>Attempts</h2>
${attempts.length === 0 ? html`<p>No attempts yet.</p>` : numberedByRun(attempts).map(({ a, run, runs }, i) => html`
<article class="attempt" aria-labelledby="attempt-${i}">
  <h3 id="attempt-${i}">${runs > 1 ? `${capitalized(runName(run))}, a` : 'A'}ttempt ${a.attempt ?? '?'} of ${totalAttempts}: <span class="badge ${acknowledges(a.response_code) ? 'completed' : 'failed'}">${a.response_code || 'no response'}</span> after ${a.total_time} ms, ${when(a.created_at)}</h3>
  <p class="code">POST <span class="url">${breakableUrl(a.request_url)}</span></p>
  <details><summary>Request headers and body</summary>${headerTable(a.request_headers, true)}<pre>${a.request_body}</pre></details>
  <details open><summary>Response headers and body</summary>${headerTable(a.response_headers)}<pre>${a.response_body || '(empty)'}</pre></details>
</article>`)}`);
}

/**
 * A delivery's attempts over all its runs, as its attempt cards list them:
 * "3 attempts: 2 failed, then delivered", "2 attempts so far, both failed".
 */
export function attemptsText(d: Pick<DeliveryProgress, 'state' | 'sent' | 'failed'>): string {
  const count = `${d.sent} attempt${d.sent === 1 ? '' : 's'}`;
  if (d.sent === 0) return d.state === 'pending' ? 'none yet' : 'none sent';
  if (d.state === 'completed') return d.failed ? `${count}: ${d.failed} failed, then delivered` : `${count}: delivered`;
  const all = d.sent === 1 ? 'failed' : d.sent === 2 ? 'both failed' : 'all failed';
  return d.state === 'pending' ? `${count} so far, ${all}` : `${count}, ${all}`;
}

/** Run 1 is the first delivery; each replay or recovery that sent anything is a redelivery. */
const runName = (run: number) => (run === 1 ? 'first delivery' : run === 2 ? 'redelivery' : `redelivery ${run - 1}`);
const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * Each attempt (oldest first) with the run it belongs to among its URL's: a new run
 * starts where an attempt is number 1 again. (The URL stands for its webhook: what the
 * card shows.)
 */
function numberedByRun(attempts: AttemptView[]): { a: AttemptView; run: number; runs: number }[] {
  const runOf = new Map<string, number>();
  const numbered = attempts.map((a) => {
    const run = (runOf.get(a.request_url) ?? 0) + (a.attempt === 1 || !runOf.has(a.request_url) ? 1 : 0);
    runOf.set(a.request_url, run);
    return { a, run };
  });
  return numbered.map((n) => ({ ...n, runs: runOf.get(n.a.request_url)! }));
}

/**
 * Request headers show the values the service sets; a custom header's value is never
 * rendered in the portal (they often carry credentials), only its name.
 */
function headerTable(headers: Record<string, string>, hideCustomValues = false): Html {
  const entries = Object.entries(headers);
  if (entries.length === 0) return html`<p>(no headers)</p>`;
  const shown = (name: string) => !hideCustomValues || RESERVED_HEADERS.has(name.toLowerCase()) || name.toLowerCase().startsWith(BRAND_PREFIX);
  return html`<table class="headers cards"><tbody>${entries.map(([k, v]) => html`<tr><th scope="row">${k}</th><td>${shown(k) ? v : html`<span class="hint">custom header: value not shown</span>`}</td></tr>`)}</tbody></table>`;
}
