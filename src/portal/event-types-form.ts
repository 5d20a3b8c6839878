import { EVENT_FAMILIES, EVENT_TYPE_CATALOGUE } from '../events/types';
import { EVERY_TYPE } from '../events/type-patterns';
import { type Html, html } from './html';

/**
 * The subscription fields of the portal's webhook forms: "all event types" or the types
 * chosen, by family (a whole family is `family.*`), each type with when it is emitted.
 * No script: the stylesheet folds the families away while "all" is chosen, and what a
 * combination means is decided here, on the server (`eventTypesFrom`).
 */
type FormFields = Record<string, string | string[] | undefined>;

const SCOPE = 'event_types_scope';
const CHOSEN = 'event_types';
const wildcardOf = (family: string) => `${family}.*`;

/** What the fields show: every type, or these entries checked. */
export interface EventTypeSelection {
  all: boolean;
  patterns: readonly string[];
}

/** A stored subscription as the fields show it; a wildcard wider than a family (`shipment.*`) checks the families it takes. */
export function selectionOf(types: readonly string[] | null): EventTypeSelection {
  if (!types || types.includes(EVERY_TYPE)) return { all: true, patterns: [] };
  const wildcards = types.filter((t) => t.endsWith('.*')).map((t) => t.slice(0, -1));
  const families = EVENT_FAMILIES.filter(({ family }) => wildcards.some((prefix) => `${family}.`.startsWith(prefix))).map(({ family }) => wildcardOf(family));
  return { all: false, patterns: [...families, ...types.filter((t) => !t.endsWith('.*'))] };
}

/** A re-shown form keeps what was ticked. */
export function selectionFromForm(form: FormFields): EventTypeSelection {
  return { all: form[SCOPE] !== 'chosen', patterns: valuesOf(form[CHOSEN]) };
}

export function eventTypeFields(selected: EventTypeSelection): Html {
  const checked = (value: string) => (selected.patterns.includes(value) ? html` checked` : '');
  return html`<fieldset class="event-types"><legend>Events it receives</legend>
    <label class="check"><input type="radio" name="${SCOPE}" value="all"${selected.all ? html` checked` : ''}> All events, of every type (also types added later)</label>
    <label class="check"><input type="radio" name="${SCOPE}" value="chosen"${selected.all ? '' : html` checked`}> Only the types chosen below</label>
    <div class="families">${EVENT_FAMILIES.map(({ family, types }) => html`
      <fieldset class="family"><legend>${family}</legend>
        <label class="check whole"><input type="checkbox" name="${CHOSEN}" value="${wildcardOf(family)}"${checked(wildcardOf(family))}><span><code>${wildcardOf(family)}</code> every ${family} event</span></label>
        <div class="types">${types.map((type) => html`
          <label class="check type"><input type="checkbox" name="${CHOSEN}" value="${type}"${checked(type)}><span><code>${type}</code> <span class="hint">${EVENT_TYPE_CATALOGUE[type]}</span></span></label>`)}
        </div>
      </fieldset>`)}
    </div>
  </fieldset>`;
}

/**
 * The subscription a form asks for: null for every type; the entries ticked (a type
 * whose whole family is ticked too is left out: the family takes it); undefined when
 * the form has no such fields (an update then leaves the subscription as it is).
 * Nothing ticked is sent as it is, an empty list, which the API refuses with why.
 */
export function eventTypesFrom(form: FormFields): string[] | null | undefined {
  const scope = form[SCOPE];
  if (scope === undefined) return undefined;
  if (scope !== 'chosen') return null;
  const chosen = valuesOf(form[CHOSEN]);
  const families = chosen.filter((c) => c.endsWith('.*')).map((c) => c.slice(0, -1));
  return chosen.filter((c) => c.endsWith('.*') || !families.some((prefix) => c.startsWith(prefix)));
}

/** What a webhook receives, in words: "all event types", or its entries (the first `max` of them, and how many more). */
export function receivesText(types: readonly string[] | null, max = Infinity): string {
  if (!types || types.includes(EVERY_TYPE)) return 'all event types';
  return types.length > max ? `${types.slice(0, max).join(', ')} and ${types.length - max} more` : types.join(', ');
}

const valuesOf = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);
