// Workflow entry point bundled by the worker. Deterministic code only: everything
// that touches the world is an activity (activities/).
export { deliverEvent } from './deliver-event';
export { webhookHealth } from './webhook-health';
export { testTracker } from './test-tracker';
export { retention } from './retention';
