/**
 * What an upstream failure says about itself: the error codes along its cause chain (undici's,
 * the socket's, and reply-from's wrappers around them), and which of them mean the request
 * never left the gateway, so that retrying it cannot repeat anything on v3.
 */
export const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  // The destination policy refused the address before a byte of the request was sent (src/lib/net/).
  'FXGATE_DESTINATION_REFUSED',
]);

export function errorCodesOf(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = current.cause;
  }
  return codes;
}
