/**
 * The rules a delivery run follows, fixed in its input by the starter, so that a run
 * replays by the rules it started with when newer code is deployed. A rule keyed on
 * this costs a run nothing, where each `patched()` call also upserts the
 * TemporalChangeVersion search attribute (a history event and a visibility write).
 * Runs started before 2026-11-25 have none (rules 1, told apart with `patched()`).
 *
 * 2: the first retry always waits in its activity (no `patched()`), and
 *    ShiphookEventStatus holds outcomes only (no `retrying`).
 */
export const DELIVERY_RULES = 2;
