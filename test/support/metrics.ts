/** Prometheus text as the tests read it: every sample with its labels. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export async function scrape(url: string, headers: Record<string, string> = {}): Promise<Sample[]> {
  const res = await fetch(url, { headers });
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  return parseMetrics(await res.text());
}

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/** Metric family names, as a dashboard query names them (a histogram's `_bucket`/`_sum`/`_count` included). */
export function exportedNames(samples: Sample[]): Set<string> {
  return new Set(samples.map((s) => s.name));
}
