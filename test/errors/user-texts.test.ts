import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openapiJson } from '../../src/api/openapi';
import { catalogue } from '../../src/errors/catalogue';

/** The project's internal name for the API specification: never in what a user reads. */
const INTERNAL = /\bseeds?\b/i;
const ROOT = new URL('../../', import.meta.url).pathname;

const filesUnder = (dir: string, ext: string): string[] =>
  readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith(ext)).map((f) => path.join(dir, f));

const hits = (files: string[]) =>
  files.flatMap((f) => readFileSync(path.join(ROOT, f), 'utf8').split('\n').flatMap((line, i) => (INTERNAL.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])));

describe('what a user reads says "the API specification", never the internal word', () => {
  it('the OpenAPI document', () => {
    const doc = openapiJson();
    expect(doc.length).toBeGreaterThan(10_000);
    expect(doc.match(new RegExp(`.{0,60}${INTERNAL.source}.{0,60}`, 'gi')) ?? []).toEqual([]);
  });

  it("the error catalogue's messages", () => {
    expect(Object.entries(catalogue).filter(([, e]) => INTERNAL.test(e.message))).toEqual([]);
  });

  it('every source file (API messages, operation texts, portal pages, CLI output), the README and the docs', () => {
    expect(hits([...filesUnder('src', '.ts'), ...filesUnder('src', '.css'), 'README.md', ...filesUnder('docs', '.md')])).toEqual([]);
  });
});
