/**
 * A start-up failure whose message is meant for a person as it is (a taken port, a
 * missing tool, a folder PostgreSQL cannot reach): the CLI prints it as one
 * paragraph, without a stack trace.
 */
export class LaunchError extends Error {}
