/**
 * What the environment of every CLI run in the tests holds unless the test passes its own value,
 * in process (in-process-cli.ts) and as a child (cli-process.ts): warnings and worse in the log,
 * and no drain delay, so that a server on PostgreSQL stops at once unless the test asks for its
 * drain (an empty value asks for the default).
 */
export const TEST_ENV_DEFAULTS: Readonly<Record<string, string>> = { LOG_LEVEL: 'warn', FXGATE_DRAIN_DELAY_MS: '0' };
