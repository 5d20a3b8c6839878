/**
 * The environment every test process and the test worker share: tiny timings so
 * retries, disabling and tracker steps happen within seconds.
 */
export const TEST_ENV = {
  SHIPHOOK_ADMIN_TOKEN: 'test-admin-token',
  SHIPHOOK_ALLOW_INSECURE_WEBHOOKS: 'true',
  SHIPHOOK_RETRY_DELAYS: '300ms,600ms,900ms',
  SHIPHOOK_ATTEMPT_TIMEOUT: '1500ms',
  SHIPHOOK_DISABLE_AFTER_FAILURES: '4',
  SHIPHOOK_DISABLE_AFTER: '1s',
  SHIPHOOK_TEST_TRACKER_STEP: '1s',
  SHIPHOOK_TASK_QUEUE: 'shiphook-test',
  LOG_LEVEL: 'warn',
  // Several workers run at once: each takes any free port and reports it when ready.
  SHIPHOOK_WORKER_HTTP_PORT: '0',
} as const;
