/** Workflow ids: an event's delivery workflow is the event id itself, so operators find it by id. */
export const deliveryWorkflowId = (eventId: string) => eventId;
export const healthWorkflowId = (webhookId: string) => `webhook-health-${webhookId}`;
