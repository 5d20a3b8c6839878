import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The house rules a reader meets first (DEVELOPERS.md; the before-stop hook counts the same):
 * the bench's top level, docs/performance.md and the README stay short, and their links
 * lead somewhere. Reads files only; needs none of the suite's services.
 */
const lines = (file: string) => (readFileSync(file, 'utf8').match(/\n/g) ?? []).length;

/** A heading's anchor as GitHub makes it: lower case, punctuation and symbols dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').toLowerCase().replace(/[^\p{L}\p{M}\p{Nd}\p{Nl}\p{Pc} -]/gu, '').replace(/ /g, '-');

/** The anchors of a markdown file's headings (a repeated heading's get -1, -2, …). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of withoutFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = slug(heading!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

const withoutFences = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, '');
const withoutCode = (markdown: string) => withoutFences(markdown).replace(/`[^`\n]*`/g, '');

/** The local links of `file` (to a file of the repository, or to a heading) that lead nowhere. */
function brokenLinks(file: string, markdown = readFileSync(file, 'utf8')): string[] {
  const broken: string[] = [];
  for (const [, target] of withoutCode(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    if (/^[a-z][a-z+.-]*:/i.test(target!)) continue; // https:, mailto:
    const [to, anchor] = target!.split('#') as [string, string | undefined];
    const into = to && path.join(path.dirname(file), decodeURIComponent(to));
    if (into && !existsSync(into)) broken.push(`${file}: ${target} (no such file)`);
    else if (anchor && (!into || into.endsWith('.md')) && !anchors(into ? readFileSync(into, 'utf8') : markdown).has(anchor)) broken.push(`${file}: ${target} (no such heading)`);
  }
  return broken;
}

describe('house rules', () => {
  it('keeps the bench top level under 1,200 lines, docs/performance.md under 200, README.md under 250', () => {
    const bench = readdirSync('bench').filter((f) => /\.(ts|mjs)$/.test(f)).reduce((n, f) => n + lines(path.join('bench', f)), 0);
    expect(bench, 'bench/*.ts, bench/*.mjs: scenarios no target reads go to bench/lab/').toBeLessThanOrEqual(1200);
    expect(lines('docs/performance.md'), 'docs/performance.md says how things are today; dated runs go to docs/performance-log.md').toBeLessThanOrEqual(200);
    expect(lines('README.md'), 'README.md: the rest belongs in docs/').toBeLessThanOrEqual(250);
  });

  it('finds every local link of README.md and docs/*.md, and every heading it names', () => {
    const docs = readdirSync('docs').filter((f) => f.endsWith('.md')).map((f) => path.join('docs', f));
    expect(['README.md', ...docs].flatMap((f) => brokenLinks(f))).toEqual([]);
  });

  it('catches a missing file and a missing heading, with headings slugged as GitHub does', () => {
    expect(slug('2026-11-26 17:08–18:49: issue #41’s end, `on` [the](x.md) code')).toBe('2026-11-26-17081849-issue-41s-end-on-the-code');
    const page = '# Title\n## A, `b`\n## A, b\n[ok](#a-b-1) [ok](performance.md#memory) [x](#a-b-2) [y](nowhere.md) `[z](nowhere.md)`\n';
    expect(brokenLinks('docs/x.md', page)).toEqual(['docs/x.md: #a-b-2 (no such heading)', 'docs/x.md: nowhere.md (no such file)']);
  });
});
