import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Custom search attributes on every delivery workflow, so an operator can find an
 * event's history in the Temporal UI by event id, type, user, mode and status.
 * The dev server registers them at start (see launcher/temporal.ts); a production
 * cluster needs `temporal operator search-attribute create` once (README).
 */
export const EventIdAttr = defineSearchAttributeKey('ShiphookEventId', SearchAttributeType.KEYWORD);
export const EventTypeAttr = defineSearchAttributeKey('ShiphookEventType', SearchAttributeType.KEYWORD);
export const UserIdAttr = defineSearchAttributeKey('ShiphookUserId', SearchAttributeType.KEYWORD);
export const ModeAttr = defineSearchAttributeKey('ShiphookMode', SearchAttributeType.KEYWORD);
export const EventStatusAttr = defineSearchAttributeKey('ShiphookEventStatus', SearchAttributeType.KEYWORD);
export const WebhookUrlsAttr = defineSearchAttributeKey('ShiphookWebhookUrls', SearchAttributeType.KEYWORD_LIST);

export const searchAttributes = [EventIdAttr, EventTypeAttr, UserIdAttr, ModeAttr, EventStatusAttr, WebhookUrlsAttr];
