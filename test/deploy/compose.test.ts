import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { duration, loadConfig } from '../../src/config';

const compose = () => readFileSync('docker-compose.yml', 'utf8').split('\n');

/** The lines of one top-level block (a service is indented two spaces) up to the next block. */
function block(header: string): string[] {
  const lines = compose();
  const start = lines.findIndex((l) => l === header);
  expect(start, header).toBeGreaterThan(-1);
  const indent = header.length - header.trimStart().length;
  const end = lines.findIndex((l, i) => i > start && l.trim() !== '' && !l.trimStart().startsWith('#') && l.length - l.trimStart().length <= indent);
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

/** The published ports of one service of docker-compose.yml (two-space indented blocks). */
function publishedPorts(service: string): string[] {
  const ports: string[] = [];
  let inPorts = false;
  for (const line of block(`  ${service}:`)) {
    if (/^ {4}ports:/.test(line)) inPorts = true;
    else if (/^ {4}\S/.test(line)) inPorts = false;
    else if (inPorts && /^ {6}- /.test(line)) ports.push(line.replace(/^ {6}- /, '').replace(/"/g, '').trim());
  }
  return ports;
}

describe('docker-compose', () => {
  it('publishes the Temporal frontend and UI on the host loopback only', () => {
    for (const service of ['temporal', 'temporal-ui']) {
      const ports = publishedPorts(service);
      expect(ports.length, service).toBeGreaterThan(0);
      for (const p of ports) expect(p, service).toMatch(/^127\.0\.0\.1:/);
    }
  });

  it('sends every api and worker trace to its Jaeger, whose UI is on the host loopback only and a Grafana data source', () => {
    // Merge keys (`<<: *shiphook-env`) resolved as compose resolves them.
    const { services } = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as { services: Record<string, { environment?: Record<string, string> }> };
    for (const service of ['api', 'worker', 'worker-retries']) {
      const env = services[service]!.environment ?? {};
      // The variables turn tracing on, toward the jaeger service's OTLP/HTTP port.
      expect(loadConfig(Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith('OTEL_')))).tracing, service).toBe(true);
      expect(env.OTEL_EXPORTER_OTLP_ENDPOINT, service).toBe('http://jaeger:4318');
    }
    expect(block('  jaeger:')).toContain('    image: jaegertracing/jaeger:2.5.0');
    expect(publishedPorts('jaeger')).toEqual(['127.0.0.1:16686:16686']);
    const source = readFileSync('deploy/grafana/provisioning/datasources/jaeger.yml', 'utf8');
    expect(source).toMatch(/^ {4}type: jaeger$/m);
    expect(source).toMatch(/^ {4}url: http:\/\/jaeger:16686$/m);
    expect(block('  grafana:')).toContain('      - jaeger');
  });

  it("keeps events and Temporal's closed histories equally long: the default retention, one setting for both", () => {
    const anchor = compose().map((l) => /^x-event-retention: &event-retention "([^"]+)"$/.exec(l)).find(Boolean);
    expect(anchor, 'x-event-retention anchor').toBeTruthy();
    // In hours or days: both shiphook and the temporal CLI read it.
    expect(anchor![1]).toMatch(/^\d+[hd]$/);
    expect(duration(anchor![1]!)).toBe(loadConfig({}).eventRetentionMs);

    expect(block('x-shiphook-env: &shiphook-env')).toContain('  SHIPHOOK_EVENT_RETENTION: *event-retention');
    // The setup step creates the namespace with it, or sets it on every start.
    const setup = block('  temporal-search-attributes:');
    expect(setup).toContain('      NAMESPACE_RETENTION: *event-retention');
    for (const command of ['create', 'update']) {
      expect(setup.join('\n')).toContain(`temporal operator namespace ${command} --address temporal:7233 --namespace default --retention "$$NAMESPACE_RETENTION";`);
    }
  });
});
