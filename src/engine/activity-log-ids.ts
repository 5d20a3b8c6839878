import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { AttemptInput, RetryInput } from './contract';

/**
 * The SDK's own lines about a delivery activity ("Activity completed", "Activity
 * failed", with the failure) carry the event id and webhook id its input names, as
 * shiphook's delivery lines do; its task token (a capability to complete the
 * activity) is left out. The SDK writes "Activity started" before the input is
 * seen: that line has the event id only (the workflow id, see runtime.ts).
 */
export const deliveryLogIds: ActivityInterceptorsFactory = () => {
  let ids: Record<string, string> = {};
  return {
    inbound: {
      async execute(input, next) {
        // Other activities take other arguments: only a delivery's input names both ids.
        const arg = input.args[0] as Partial<AttemptInput & RetryInput> | undefined;
        if (typeof arg?.eventId === 'string') ids = { event_id: arg.eventId };
        if (typeof arg?.target?.webhookId === 'string') ids.webhook_id = arg.target.webhookId;
        return next(input);
      },
    },
    outbound: {
      getLogAttributes(input, next) {
        const { taskToken: _token, ...attributes } = next(input);
        return { ...attributes, ...ids };
      },
    },
  };
};
