/**
 * What `fxgate diff`'s declaration (definitions/diff.ts) and its work (generations-command.ts,
 * report-command.ts) share: the options and defaults, here so that neither imports the other.
 */
export interface DiffGenerationsOptions {
  readonly url: string;
  readonly key: string;
  /** Comma-separated operation names. */
  readonly only?: string;
  readonly json?: string;
  readonly junit?: string;
  readonly issuer?: string;
  /** Per request, in ms (text from the command line, or a number). */
  readonly timeout?: string | number;
}

export const DIFF_DEFAULTS = { timeoutMs: 10_000 } as const;

/** Where a gateway's admin listener serves the shadow report. */
export const SHADOW_REPORT_PATH = '/admin/shadow/report';
