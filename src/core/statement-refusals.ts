/**
 * How the core's database functions (fx_execute_trade, fx_create_withdrawal) refuse: SQLSTATE
 * FXR01, the reason as the message, the facts the API error needs as JSON text in DETAIL. Part
 * of the core; the domain modules that call those functions read it, nothing else.
 */

/** SQLSTATE of a refusal raised by one of the core's database functions. */
const REFUSAL_SQLSTATE = 'FXR01';

export interface StatementRefusal {
  readonly reason: string;
  /** DETAIL parsed; undefined when the refusal carries none. */
  readonly facts: unknown;
}

/** The refusal `error` is, or null for any other error (a failpoint's FXF01, a lost connection...). */
export function statementRefusalOf(error: unknown): StatementRefusal | null {
  const e = error as { code?: unknown; message?: unknown; detail?: unknown } | null;
  if (e?.code !== REFUSAL_SQLSTATE || typeof e.message !== 'string') return null;
  return {
    reason: e.message,
    facts: typeof e.detail === 'string' && e.detail !== '' ? JSON.parse(e.detail) : undefined,
  };
}
