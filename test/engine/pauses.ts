import type { Client } from '@temporalio/client';
import { call } from '../support/http';
import type { TestSystem } from '../support/system';

/** What the rate-limit and ordering tests read: the run's waits as the Temporal UI shows them, the portal's pages, the receiver's clock. */

/** The summaries of the run's durable timers (a held delivery's wait, a wait for an object's turn). */
export async function timerSummaries(client: Client, workflowId: string): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const data = e.timerStartedEventAttributes ? e.userMetadata?.summary?.data : undefined;
    return data ? [JSON.parse(Buffer.from(data).toString('utf8')) as string] : [];
  });
}

/** The run's current details (the UI's "Current details"), from the SDK's built-in metadata query. */
export async function currentDetails(client: Client, workflowId: string): Promise<string> {
  const metadata = await client.workflow.getHandle(workflowId).query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  return metadata.currentDetails ?? '';
}

/** The most requests any window of `windowMs` saw, from their arrival times (ms). */
export function mostInWindow(times: number[], windowMs = 1000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** A portal session as a browser holds it: its cookie, and the CSRF token its forms carry. */
export async function portalSession(sys: TestSystem, key: string) {
  const link = (await call(sys, 'POST', '/portal_sessions', { key })).body.url as string;
  const opened = await fetch(link, { redirect: 'manual' });
  const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
  const get = async (path: string) => (await fetch(`${sys.origin}${path}`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await get('/portal/'))![1]!;
  return {
    get,
    /** Posts a form as the page would; answers the status and where it led. */
    async post(path: string, fields: Record<string, string>) {
      const res = await fetch(`${sys.origin}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
      });
      return { status: res.status, location: res.headers.get('location'), text: await res.text() };
    },
  };
}
