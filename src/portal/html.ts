import escapeHtml from 'escape-html';

/**
 * HTML for the portal's server-rendered pages: every interpolated value is escaped
 * unless it is already `Html` (a fragment built the same way), so data from the
 * database or the request can never become markup.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Value = Html | string | number | boolean | null | undefined | Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  if (value instanceof Html) return value.text;
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => (out += render(v) + strings[i + 1]!));
  return new Html(out);
}

/**
 * A URL that a narrow screen may wrap after its separators (`/ . ? & = #`) and nowhere
 * else: each piece escaped, a `<wbr>` after each separator.
 */
export function breakableUrl(url: string): Html {
  return new Html(url.split(/(?<=[/.?&=#])/).map((piece) => escapeHtml(piece)).join('<wbr>'));
}
