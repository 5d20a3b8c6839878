import type { CustomHeader } from '../webhooks/tables';
import { type Html, html } from './html';

/**
 * The custom-header fields of the portal's webhook forms. Values are write-only: the
 * page shows the names of the headers a webhook has and never a value, and an empty
 * value field keeps the value the header has now.
 */
const SLOTS = [0, 1, 2];

export function headerFields(names: string[]): Html {
  const existing = names.some(Boolean);
  return html`<fieldset><legend>Custom headers <span class="hint">(at most 3; sent with every delivery)</span></legend>
    ${existing ? html`<p class="hint" id="header-values-hint">Header values are write-only: they are never shown. Leave a value empty to keep the one the header has; clear a name to remove its header.</p>` : ''}
    ${SLOTS.map((i) => html`<div class="pair">
      <label for="header_name_${i}">Name ${i + 1}</label><input id="header_name_${i}" name="header_name_${i}" value="${names[i] ?? ''}" autocomplete="off">
      <label for="header_value_${i}">Value ${i + 1}</label><input id="header_value_${i}" name="header_value_${i}" autocomplete="off"${
        names[i] ? html` placeholder="unchanged" aria-describedby="header-values-hint"` : ''}>
    </div>`)}
  </fieldset>`;
}

/** The names a re-shown form keeps (never the values typed: they are not sent back to the browser). */
export function headerNamesOf(form: Record<string, string>): string[] {
  return SLOTS.map((i) => form[`header_name_${i}`] ?? '');
}

/**
 * The header list a form asks for. A named header with an empty value keeps the value
 * of the current header of that name (names compare case-insensitively, as HTTP's do);
 * a new name with an empty value stays empty, so validation says it is required.
 */
export function headersFrom(form: Record<string, string>, current: CustomHeader[] = []): CustomHeader[] {
  return SLOTS.flatMap((i) => {
    const name = (form[`header_name_${i}`] ?? '').trim();
    const value = form[`header_value_${i}`] ?? '';
    if (!name && !value) return [];
    const kept = value === '' && name ? current.find((h) => h.name.toLowerCase() === name.toLowerCase())?.value : undefined;
    return [{ name, value: kept ?? value }];
  });
}
