import type { HourOfAttempts } from '../webhooks/delivery-history';
import { type Html, html } from './html';

/**
 * A webhook's success rate hour by hour as a small inline SVG drawn on the server: one
 * bar per hour, its succeeded share green over its failed share red, an hour without
 * attempts a faint stub. No script and no inline style (the portal's CSP allows
 * neither): colours come from portal.css classes. Each bar's <title> states its hour's
 * figures for pointer users; the summary and the figure's label say it in words.
 */
const BAR = 10;
const GAP = 2;
const HEIGHT = 48;

export function successRate(hours: HourOfAttempts[]): { attempts: number; succeeded: number; percent: number | null } {
  const attempts = hours.reduce((n, h) => n + h.attempts, 0);
  const succeeded = hours.reduce((n, h) => n + h.succeeded, 0);
  return { attempts, succeeded, percent: attempts ? Math.floor((succeeded / attempts) * 1000) / 10 : null };
}

export function successChart(hours: HourOfAttempts[]): Html {
  const { attempts, succeeded, percent } = successRate(hours);
  const summary = percent === null ? 'No delivery attempts in the last 24 hours.' : `${percent}% of ${attempts} attempts succeeded in the last 24 hours (${attempts - succeeded} failed).`;
  const width = hours.length * (BAR + GAP) - GAP;
  return html`<figure class="chart">
  <svg viewBox="0 0 ${width} ${HEIGHT}" width="${width * 2}" height="${HEIGHT * 2}" role="img" aria-label="Success rate per hour, last 24 hours: ${summary}" focusable="false">
    ${hours.map((h, i) => bar(h, i * (BAR + GAP)))}
  </svg>
  <figcaption><span class="axis"><span>24 h ago</span><span>now</span></span>${summary}</figcaption>
</figure>`;
}

function bar(h: HourOfAttempts, x: number): Html {
  const label = `${h.hour.slice(11, 16)} UTC: ${h.attempts ? `${h.attempts} attempts, ${h.succeeded} succeeded` : 'no attempts'}`;
  if (!h.attempts) return html`<g><title>${label}</title><rect class="none" x="${x}" y="${HEIGHT - 2}" width="${BAR}" height="2"></rect></g>`;
  const ok = Math.round((h.succeeded / h.attempts) * HEIGHT);
  return html`<g><title>${label}</title>${
    ok < HEIGHT ? html`<rect class="bad" x="${x}" y="0" width="${BAR}" height="${HEIGHT - ok}"></rect>` : ''}${
    ok > 0 ? html`<rect class="ok" x="${x}" y="${HEIGHT - ok}" width="${BAR}" height="${ok}"></rect>` : ''}</g>`;
}
