import { describe, expect, it } from 'vitest';
import { errorText } from '../../src/errors/error-text';

describe('errorText: what a log line or a stored reason shows of an error', () => {
  it('joins the message with its causes\' and cuts the whole to the length asked, marking the cut', () => {
    const err = new Error('Failed to start Workflow', { cause: new Error('14 UNAVAILABLE: connection refused') });
    expect(errorText(err)).toBe('Failed to start Workflow: 14 UNAVAILABLE: connection refused');
    expect(errorText(err, 10)).toBe('Failed to…');
    expect(errorText(err, 10)).toHaveLength(10);
  });

  it('takes strings and odd values as they are', () => {
    expect(errorText('plain')).toBe('plain');
    expect(errorText(undefined)).toBe('undefined');
    expect(errorText({ code: 3 })).toBe('[object Object]');
    expect(errorText('x'.repeat(300))).toHaveLength(200);
  });
});
