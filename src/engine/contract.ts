import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineSignal } from '@temporalio/workflow';
import type { EventStatus } from '../events/tables';

export type { EventStatus };

/**
 * The engine's contract: everything that crosses the workflow sandbox's line. The
 * workflows (workflows/), their activities (activities/) and the code that starts and
 * signals them (src/engine/) all import it; it imports nothing of theirs, so the
 * sandbox bundles it as it is.
 */

// ---- the delivery workflow ----------------------------------------------------------

export interface DeliveryTarget {
  webhookId: string;
  /** Masked, for operators reading the history. */
  url: string;
}

export interface DeliverEventInput {
  eventId: string;
  /** The deliveries still pending when the run was started (read by the starter). */
  targets: DeliveryTarget[];
  /** Waits between attempts; attempts per URL = delays + 1. Fixed at start, so visible in the UI. */
  retryDelaysMs: number[];
  /** Bounds one HTTP attempt; the activity gets that plus room for SQL. */
  attemptTimeoutMs: number;
  /** Where later attempts run (workers of role `retries` or `all`). */
  retryTaskQueue: string;
  /**
   * Epoch ms: when retention removes the event (its creation + SHIPHOOK_EVENT_RETENTION).
   * A run whose event ends `failed` stays open until then, unless a replay or recovery
   * replaces it first (workflows/deliver-event.ts).
   */
  retainedUntil: number;
}

/** Delivers one event to every pending webhook; returns the event's status as the run left it (a failed one: once retention ends its wait). */
export type DeliverEvent = (input: DeliverEventInput) => Promise<EventStatus | undefined>;

/** The first attempt: every target at once (or one a rate limit or order per object held back, once it may go). */
export interface AttemptInput {
  eventId: string;
  /** The webhooks to attempt now (URLs masked: the input is visible in the Temporal UI). */
  targets: DeliveryTarget[];
  /** Waits between attempts, fixed when the run started; attempts per URL = delays + 1. */
  retryDelaysMs: number[];
  /** The rate-limit slot (epoch ms) a held delivery to `webhookId` was given: sent at it, no other reserved. */
  slot?: { webhookId: string; at: number };
  /** Epoch ms: not before then (a first retry made in the task of attempt 1: workflows/deliver-event.ts). */
  notBefore?: number;
}

/** The remaining attempts to one target. */
export interface RetryInput {
  eventId: string;
  target: DeliveryTarget;
  retryDelaysMs: number[];
  /** Epoch ms: the first retry's time, when the activity waits for it (workflows/deliver-event.ts). */
  notBefore?: number;
}

/**
 * `next`: on an ordered webhook, the event whose delivery may take the object's turn now that
 * this one settled; its run is told (`turnSignal`).
 */
export type TargetOutcome =
  | { webhookId: string; outcome: 'delivered'; next?: string }
  /** Failed with attempts left: the next one is due in `retryInMs` from the answer, at `retryAt` (epoch ms). */
  | { webhookId: string; outcome: 'retry'; attempt: number; responseCode: number; retryInMs: number; retryAt: number }
  /** Failed, and that was the last attempt. */
  | { webhookId: string; outcome: 'failed'; attempt: number; responseCode: number; next?: string }
  /** 410 Gone, or the webhook was disabled or deleted: no further attempts. */
  | { webhookId: string; outcome: 'stopped'; reason: string; gone?: true; next?: string }
  | DeliveryPause;

/**
 * Not sent, and no attempt used (`attempt` is the one it will be): the run waits, then
 * attempts again. `held`: the webhook's rate limit reserved it the slot `slotAt` (epoch ms),
 * and its attempt should start at `wakeAt`. `waiting`: the webhook orders per object, and an
 * earlier event about `objectId` (`behind`, when known) goes first; the run is told when its
 * turn may have come (`turnSignal`).
 */
export type DeliveryPause =
  | { webhookId: string; outcome: 'held'; attempt: number; perSecond: number; slotAt: number; wakeAt: number }
  | { webhookId: string; outcome: 'waiting'; attempt: number; objectId: string; behind?: string };

export interface AttemptResult {
  /** The event status after this attempt's outcomes were recorded. */
  status: EventStatus;
  outcomes: TargetOutcome[];
}

/** An earlier event about the same object settled: the delivery to `webhookId` may have its turn now. */
export const turnSignal = defineSignal<[{ webhookId: string }]>('turn');

// ---- the webhook health workflow ---------------------------------------------------

export interface HealthInput {
  webhookId: string;
  /** Carried across continue-as-new: the start (epoch ms) of the run of failures being watched. */
  failingSince?: number;
}

export type WebhookHealth = (input: HealthInput) => Promise<void>;

/**
 * How delivery activities tell a webhook's health workflow that a run of failures
 * started or goes on, or ended: the engine implements it (src/engine/starters.ts),
 * starting the workflow if need be, and a worker spaces them (src/engine/health-signals.ts).
 */
export interface HealthSignals {
  failing(webhookId: string, since: Date): Promise<void>;
  recovered(webhookId: string): Promise<void>;
}

/** A run of failed attempts started at `since` (epoch ms); sent again every few failures of the run. */
export const failingSignal = defineSignal<[{ since: number }]>('failing');
/** An attempt succeeded after failures: the run is over. */
export const recoveredSignal = defineSignal('recovered');
/** The webhook was re-enabled (or its run of failures ended by an update): the workflow starts a fresh run. */
export const reenabledSignal = defineSignal('reenabled');
/** The webhook was deleted: the workflow ends. */
export const deletedSignal = defineSignal('deleted');

// ---- the test tracker workflow -----------------------------------------------------

export interface TestTrackerInput {
  trackerId: string;
  stepMs: number;
}

export type TestTracker = (input: TestTrackerInput) => Promise<void>;

// ---- the retention workflow --------------------------------------------------------

/** What a retention run removed and created, by what (`events`, `payload partitions dropped`, …). */
export type RetentionCounts = Record<string, number>;

/** One call of one sweep: what it did, and whether it stopped at its batch's bound. */
export interface SweepResult {
  counts: RetentionCounts;
  more: boolean;
}

/** Carried across continue-as-new; a scheduled run starts with `{}`. */
export interface RetentionInput {
  sweeps?: string[];
  sweepIndex?: number;
  counts?: RetentionCounts;
}

/** Runs every sweep (activities/retention.ts) in order, each in bounded batches; returns the totals. */
export type Retention = (input: RetentionInput) => Promise<RetentionCounts>;

/**
 * The Temporal Schedule that starts the retention workflow (src/engine/retention-schedule.ts):
 * `shiphook-retention` for the default task queue. One per task queue, so deployments (or
 * test systems) sharing a namespace never hand their runs to each other's workers.
 */
export const retentionScheduleId = (taskQueue: string) => `${taskQueue}-retention`;

// ---- workflow ids ------------------------------------------------------------------

/** An event's delivery workflow is the event id itself, so operators find it by id. */
export const deliveryWorkflowId = (eventId: string) => eventId;
export const healthWorkflowId = (webhookId: string) => `webhook-health-${webhookId}`;
export const testTrackerWorkflowId = (trackerId: string) => `test-tracker-${trackerId}`;

// ---- search attributes -------------------------------------------------------------

/**
 * Custom search attributes on every delivery workflow, so an operator can find an
 * event's history in the Temporal UI by event id, type, user, mode, status and the
 * object it is about. The starter sets all but the status, which the workflow upserts
 * when the event reaches an outcome after retries (a failed one's run then waits for a
 * replay: workflows/deliver-event.ts). The dev server registers them at start (see
 * launcher/temporal.ts); a production cluster needs `temporal operator search-attribute
 * create` for each (docs/operations.md).
 */
export const EventIdAttr = defineSearchAttributeKey('ShiphookEventId', SearchAttributeType.KEYWORD);
export const EventTypeAttr = defineSearchAttributeKey('ShiphookEventType', SearchAttributeType.KEYWORD);
export const UserIdAttr = defineSearchAttributeKey('ShiphookUserId', SearchAttributeType.KEYWORD);
export const ModeAttr = defineSearchAttributeKey('ShiphookMode', SearchAttributeType.KEYWORD);
export const EventStatusAttr = defineSearchAttributeKey('ShiphookEventStatus', SearchAttributeType.KEYWORD);
export const WebhookUrlsAttr = defineSearchAttributeKey('ShiphookWebhookUrls', SearchAttributeType.KEYWORD_LIST);
/** The event's `result.id` (`trk_…`, `shp_…`, `batch_…`); not set for an event without one of the searchable shape. */
export const ObjectIdAttr = defineSearchAttributeKey('ShiphookObjectId', SearchAttributeType.KEYWORD);

export const searchAttributes = [EventIdAttr, EventTypeAttr, UserIdAttr, ModeAttr, EventStatusAttr, WebhookUrlsAttr, ObjectIdAttr];
