/**
 * The environment every test process and the test worker share: tiny timings so
 * retries, disabling and tracker steps happen within seconds.
 */
export const TEST_ENV = {
  SHIPHOOK_ADMIN_TOKEN: 'test-admin-token-of-at-least-32-characters',
  // As `shiphook dev`: loopback receivers over http; every other non-public range stays refused.
  SHIPHOOK_WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
  SHIPHOOK_WEBHOOK_ALLOW_HTTP: 'true',
  // On, but far above what tests send in a burst; test/security/rate-limits.test.ts starts APIs with low limits.
  SHIPHOOK_RATE_LIMIT_PER_SECOND: '2000',
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

/**
 * What makes a shiphook process export its traces to an OTLP receiver (src/launcher/otlp-receiver.ts)
 * as OTLP/JSON, sending each batch within a fifth of a second.
 */
export const otlpEnv = (endpoint: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_BSP_SCHEDULE_DELAY: '200',
});
