import { describe, expect, it } from 'vitest';
import { successChart } from '../../src/portal/chart';
import { headersFrom } from '../../src/portal/header-form';
import { breakableUrl } from '../../src/portal/html';
import { attemptsText } from '../../src/portal/event-pages';
import { webhookPage, type WebhookRowView } from '../../src/portal/webhook-pages';

/** The portal's rendering rules that need no server: URL wrapping, write-only header values, the chart, why a webhook is disabled. */
describe('portal rendering', () => {
  it('lets a URL wrap after its separators only, every piece escaped', () => {
    expect(breakableUrl('https://x.example/a?b=1&c="<d>"').text).toBe(
      'https:/<wbr>/<wbr>x.<wbr>example/<wbr>a?<wbr>b=<wbr>1&amp;<wbr>c=<wbr>&quot;&lt;d&gt;&quot;',
    );
  });

  it('keeps a header value left empty, replaces a typed one, drops a cleared name, leaves a new empty one for validation', () => {
    const current = [{ name: 'X-Key', value: 'k1' }, { name: 'X-Tenant', value: 't1' }];
    expect(headersFrom({ header_name_0: 'x-key', header_value_0: '', header_name_1: 'X-Tenant', header_value_1: 't2', header_name_2: 'X-New' }, current)).toEqual([
      { name: 'x-key', value: 'k1' },
      { name: 'X-Tenant', value: 't2' },
      { name: 'X-New', value: '' },
    ]);
    expect(headersFrom({ header_name_0: '', header_value_0: '', header_name_1: 'X-Tenant' }, current)).toEqual([{ name: 'X-Tenant', value: 't1' }]);
  });

  it('draws each hour as a bar split by its success rate, and says the rate in words', () => {
    const hours = Array.from({ length: 24 }, (_, i) => ({ hour: new Date(Date.UTC(2030, 0, 1, i)).toISOString(), attempts: i === 23 ? 4 : 0, succeeded: i === 23 ? 3 : 0 }));
    const svg = successChart(hours).text;
    expect(svg).toContain('75% of 4 attempts succeeded in the last 24 hours (1 failed).');
    expect(svg).toContain('<rect class="bad" x="276" y="0" width="10" height="12">');
    expect(svg).toContain('<rect class="ok" x="276" y="12" width="10" height="36">');
    expect(svg.match(/class="none"/g)).toHaveLength(23);
    expect(svg).not.toMatch(/style=|<script/);
  });

  it('states why a webhook is disabled, with the policy that applied, and never a header value', () => {
    const hook: WebhookRowView = {
      id: 'hook_1', url: 'https://x.example/h', created_at: '2030-01-01T00:00:00Z', disabled_at: '2030-01-02T00:00:00Z', headerNames: ['X-Key'], eventTypes: null,
      health: {
        status: 'disabled', consecutive_failures: 20, failing_since: null, last_success_at: null, last_error: null, last_failure_response_code: null,
        last_24h: { attempts: 0, succeeded: 0, failed: 0 }, disabled_reason: 'sustained_failures', disabled_policy: { failures: 20, after: '5d' },
      },
    };
    const page = webhookPage({ mode: 'test', csrf: 'c' }, hook, { recent: [], hours: [] });
    // First on the page, with its Re-enable button.
    const notice = /<section class="disabled"[^]*?<\/section>/.exec(page)![0];
    expect(page.indexOf(notice)).toBeLessThan(page.indexOf('id="health"'));
    expect(notice).toContain('Deliveries failed 20 times in a row over at least 5d.');
    expect(notice).toContain('action="/portal/webhooks/hook_1/enable"');
    expect(webhookPage({ mode: 'test', csrf: 'c' }, { ...hook, health: { ...hook.health, disabled_reason: 'endpoint_gone' } }, { recent: [], hours: [] })).toContain('410 Gone');
    expect(page).toContain('value="X-Key"');
    expect(page).toContain('placeholder="unchanged"');
  });

  it('sums up a delivery\'s attempts over its runs as its attempt cards list them', () => {
    expect(attemptsText({ state: 'completed', sent: 3, failed: 2 })).toBe('3 attempts: 2 failed, then delivered');
    expect(attemptsText({ state: 'completed', sent: 1, failed: 0 })).toBe('1 attempt: delivered');
    expect(attemptsText({ state: 'pending', sent: 0, failed: 0 })).toBe('none yet');
    expect(attemptsText({ state: 'pending', sent: 1, failed: 1 })).toBe('1 attempt so far, failed');
    expect(attemptsText({ state: 'failed', sent: 4, failed: 4 })).toBe('4 attempts, all failed');
    expect(attemptsText({ state: 'failed', sent: 0, failed: 0 })).toBe('none sent');
  });

  it('shows the last error as the health view says it, with the status code before an endpoint\'s own body only', () => {
    const hook: WebhookRowView = {
      id: 'hook_1', url: 'https://x.example/h', created_at: '2030-01-01T00:00:00Z', disabled_at: null, headerNames: [], eventTypes: null,
      health: { status: 'failing', consecutive_failures: 1, failing_since: null, last_success_at: null, last_error: null, last_failure_response_code: null, last_24h: { attempts: 1, succeeded: 0, failed: 1 } },
    };
    const lastError = (code: number, text: string) => {
      const page = webhookPage({ mode: 'test', csrf: 'c' }, { ...hook, health: { ...hook.health, last_failure_response_code: code, last_error: text } }, { recent: [], hours: [] });
      return /<dt>Last error<\/dt><dd>(.*?)<\/dd>/s.exec(page)![1];
    };
    expect(lastError(500, 'HTTP 500, empty body')).toBe('HTTP 500, empty body');
    expect(lastError(0, 'no response: connection refused')).toBe('no response: connection refused');
    expect(lastError(503, 'down for maintenance')).toBe('<span class="code">503</span> <pre>down for maintenance</pre>');
  });
});
