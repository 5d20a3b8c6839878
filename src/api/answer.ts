/** What an operation answers, whichever door it was called through (api/operation-runner.ts). */
export interface Answer {
  status: number;
  body: unknown;
}

/** Where a guard puts the answer's headers (the rate limits' state, Retry-After, Idempotent-Replayed): a response, or nowhere. */
export type HeaderSink = (name: string, value: string) => void;
