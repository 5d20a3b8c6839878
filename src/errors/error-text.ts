/**
 * What a log line, a stored reason or a page shows of an error: its message and its
 * causes' ("Failed to start Workflow" alone does not say why), cut to `max` characters so
 * that one odd error (an SQL text, a whole response) cannot flood a line or a column.
 * A string is its own text.
 */
export function errorText(err: unknown, max = 200): string {
  const parts: string[] = [];
  for (let e = err, depth = 0; e != null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const message = typeof e === 'object' ? (e as { message?: unknown }).message : undefined;
    parts.push(String(message ?? e));
  }
  const text = parts.length ? parts.join(': ') : String(err);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
