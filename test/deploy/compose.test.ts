import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** The published ports of one service of docker-compose.yml (two-space indented blocks). */
function publishedPorts(service: string): string[] {
  const lines = readFileSync('docker-compose.yml', 'utf8').split('\n');
  const start = lines.findIndex((l) => l === `  ${service}:`);
  expect(start, service).toBeGreaterThan(-1);
  const ports: string[] = [];
  let inPorts = false;
  for (const line of lines.slice(start + 1)) {
    if (/^ {2}\S/.test(line) || /^\S/.test(line)) break; // next service or top-level key
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
});
