import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { maskSecrets } from '../../src/log';

/**
 * Every log line the suite's processes write goes to one folder (the suite's
 * worker, isolated workers, the api of each test process); after the last test
 * the global teardown scans all of it for secrets and fails the run on a hit.
 */
export const logFile = (dir: string, name: string) => path.join(dir, `${name}.log`);

/**
 * What an OTLP receiver of the suite got (the suite's worker exports its spans, and
 * so do the tests of test/telemetry/), one export request a line, in the log folder's
 * `spans/`: scanned at the end as the logs are, and for custom header values too.
 */
export const spanFile = (dir: string, name: string) => path.join(dir, 'spans', `${name}.log`);

/** Patterns that are a leak wherever they appear: a whole API key, a URL with a password, a secret field with a value. */
const ALWAYS_LEAKS: [string, RegExp][] = [
  ['an API key', /shk_(?:test|prod)_[0-9a-f]{48}/],
  ['a URL password', /[a-z][a-z0-9+.-]*:\/\/[^\s/@"':]+:(?!\*\*\*@)[^\s/@"']+@/i],
  ['an Authorization value', /\b(?:Basic|Bearer)\s+(?!\*\*\*)[A-Za-z0-9+/=._~-]{8,}/i],
  ['a secret field', /"(?:authorization|webhook_secret|password|current_password|secret|api_key|token)":"(?!\[redacted\])[^"]/i],
  // Only the token's digest is stored, so it cannot be listed as a known secret: its shape is the leak (a request's raw path).
  ['a portal link token', /\/login\/[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/],
];

export interface Leak {
  file: string;
  line: number;
  what: string;
}

/**
 * Finds secrets in the log files of `dir`: the patterns above, and each of `known`
 * (the keys, webhook secrets and URL passwords the suite used) unless masking it
 * leaves it unchanged and short (a webhook secret like `new` is not searchable).
 */
export function findLeaks(dir: string, known: string[]): Leak[] {
  if (!existsSync(dir)) return [];
  // A key also travels as Basic auth: base64 of `key:`.
  const encoded = known.filter((k) => k.startsWith('shk_')).map((k) => Buffer.from(`${k}:`).toString('base64'));
  const needles = [...new Set([...known, ...encoded].filter((k) => k.length >= 6 && maskSecrets(k) === k))];
  const leaks: Leak[] = [];
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.log'))) {
    const lines = readFileSync(path.join(dir, name), 'utf8').split('\n');
    lines.forEach((text, i) => {
      for (const [what, re] of ALWAYS_LEAKS) if (re.test(text)) leaks.push({ file: name, line: i + 1, what });
      for (const needle of needles) if (text.includes(needle)) leaks.push({ file: name, line: i + 1, what: `the secret "${needle.slice(0, 2)}…"` });
    });
  }
  return leaks;
}
