import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/events/types';
import { matches, parseTypePatterns, patternProblem, TYPE_PATTERNS, TYPE_WILDCARDS, typesMatching } from '../../src/events/type-patterns';

describe('event-type patterns', () => {
  it('knows every family wildcard that takes a type, including the wider shipment.*', () => {
    expect(TYPE_WILDCARDS).toEqual([
      'batch.*', 'claims.*', 'insurance.*', 'payment.*', 'refund.*', 'report.*', 'scan_form.*', 'shipment.*', 'shipment.invoice.*', 'tracker.*',
    ]);
    expect(TYPE_PATTERNS).toHaveLength(1 + TYPE_WILDCARDS.length + EVENT_TYPES.length);
  });

  it('matches a type exactly, by family prefix, or everything', () => {
    expect(matches(null, 'tracker.updated')).toBe(true);
    expect(matches(undefined, 'batch.created')).toBe(true);
    expect(matches(['*'], 'report.failed')).toBe(true);
    expect(matches(['tracker.*'], 'tracker.updated')).toBe(true);
    expect(matches(['tracker.*'], 'batch.created')).toBe(false);
    expect(matches(['tracker.created'], 'tracker.updated')).toBe(false);
    expect(matches(['shipment.*'], 'shipment.invoice.updated')).toBe(true);
    expect(matches(['shipment.invoice.*'], 'shipment.invoice.created')).toBe(true);
    // The wildcard's prefix ends at a dot: a family is a whole part of the name.
    expect(matches(['report.*'], 'reports.new')).toBe(false);
    expect(typesMatching(['claims.*', 'batch.created'])).toEqual(['batch.created', 'claims.submitted', 'claims.cancelled', 'claims.updated', 'claims.rejected', 'claims.approved']);
    expect(typesMatching(null)).toEqual(EVENT_TYPES);
  });

  it('parses a list into a set, or names each bad entry by index with what is valid', () => {
    expect(parseTypePatterns(['tracker.updated', 'batch.*', 'tracker.updated', '*'])).toEqual({ patterns: ['*', 'batch.*', 'tracker.updated'] });
    const bad = parseTypePatterns(['tracker.*', 'tracker.delivered', 7, 'Tracker.Updated', 'tracker', '*.created', 'shipment.invoice.created.*']);
    expect('problems' in bad && bad.problems.map((p) => p.index)).toEqual([1, 2, 3, 4, 5, 6]);
    const messages = 'problems' in bad ? bad.problems.map((p) => p.message) : [];
    expect(messages[0]).toMatch(/^"tracker.delivered" is not an event type or pattern: each entry is an event type \(batch.created, .*tracker.updated\), a family wildcard \(batch.\*, .*tracker.\*\) or \* for every type$/);
    expect(messages[1]).toMatch(/^must be a string: each entry is an event type/);
    expect(messages[2]).toContain('(event types are lower case: tracker.updated)');
    expect(messages[3]).toContain('(a whole family is written tracker.*)');
    expect(patternProblem('x'.repeat(500))!.length).toBeLessThan(1000); // an entry is echoed cut short
  });
});
