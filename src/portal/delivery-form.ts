import { DELIVERY_ORDERINGS, type DeliveryOrdering, MAX_RATE_LIMIT } from '../webhooks/tables';
import { type Html, html } from './html';

/**
 * The delivery fields of the portal's webhook forms: the rate limit (deliveries per second,
 * empty for none) and the ordering. What the form sends is handed to the API as it is, so
 * its validation (and its messages) are the API's.
 */
export interface DeliverySettings {
  rateLimit: number | null;
  ordering: DeliveryOrdering;
}

const ORDERING_TEXT: Record<DeliveryOrdering, string> = {
  none: 'Each event on its own, as soon as it can be sent',
  per_object: 'Events about one object (a tracker, a shipment) in the order they happened: the next once the previous was acknowledged or given up',
};

export function deliveryFields(current: DeliverySettings, form?: Record<string, string>): Html {
  const rate = form ? (form.rate_limit ?? '') : current.rateLimit === null ? '' : String(current.rateLimit);
  const ordering = form ? form.ordering : current.ordering;
  return html`<fieldset><legend>Delivery</legend>
    <label for="rate_limit">Rate limit <span class="hint">(deliveries per second, 1 to ${MAX_RATE_LIMIT}; empty: no limit)</span></label>
    <input id="rate_limit" name="rate_limit" type="number" min="1" max="${MAX_RATE_LIMIT}" step="1" inputmode="numeric" value="${rate}" autocomplete="off">
    ${DELIVERY_ORDERINGS.map((o) => html`<label class="check"><input type="radio" name="ordering" value="${o}"${o === (ordering ?? 'none') ? html` checked` : ''}> ${ORDERING_TEXT[o]}</label>`)}
  </fieldset>`;
}

/**
 * What the form asks for, as the API takes it: an empty rate limit is none; anything else goes
 * as typed, for the API to judge. A field the form did not send is left as it is.
 */
export function deliverySettingsFrom(form: Record<string, string>): { rate_limit?: number | string | null; ordering?: string } {
  const text = form.rate_limit?.trim();
  return {
    ...(text === undefined ? {} : { rate_limit: text === '' ? null : /^\d+$/.test(text) ? Number(text) : text }),
    ...(form.ordering ? { ordering: form.ordering } : {}),
  };
}

/** The settings in words, for the webhook page. */
export function deliveryText(s: DeliverySettings): { rate: string; ordering: string } {
  return { rate: s.rateLimit === null ? 'No limit' : `At most ${s.rateLimit} deliveries per second`, ordering: ORDERING_TEXT[s.ordering] };
}
