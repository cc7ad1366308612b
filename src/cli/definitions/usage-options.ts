/**
 * What `fxgate usage`'s declaration (usage.ts) and its work (src/cli/commands/usage.ts,
 * src/cli/commands/usage-readiness.ts) share: the formats, the options and where the reports
 * come from, here so that neither imports the other; beside the declaration, since `--help`
 * loads it.
 */
import type { ReadinessQuery, ReadinessReport } from '../../gateway/usage/readiness-recorder.js';
import type { UsageQuery, UsageReport } from '../../gateway/usage/usage-recorder.js';

export const USAGE_FORMATS = ['table', 'json', 'csv'] as const;
export type UsageFormat = (typeof USAGE_FORMATS)[number];

export interface UsageCommandOptions {
  readonly generation?: string;
  readonly since?: string;
  readonly format: UsageFormat;
}

/** Where the command's report and clock come from: the run's configured state by default, a test's fixed ones in process. */
export interface UsageSource {
  /** Reads the report with the configured database open. */
  readonly report: (query: UsageQuery) => Promise<UsageReport>;
  readonly now: () => number;
}

/** Where the readiness report and the clock come from: the run's configured state by default, a test's in process. */
export interface ReadinessSource {
  readonly readiness: (query: ReadinessQuery) => Promise<ReadinessReport>;
  readonly now: () => number;
}
