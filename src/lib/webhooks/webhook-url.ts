/**
 * The one check of a webhook receiver's URL, for v3's endpoints (src/core/events/webhook-endpoints.ts)
 * and the legacy subscriptions (src/gateway/webhooks/subscriptions.ts): normalised (WHATWG URL),
 * its host one the mode's destination policy allows (src/lib/net/destination-policy.ts), and live
 * events only over https, a receiver on this machine excepted. Library code: pure.
 */
import type { Mode } from '../auth/credential-vocabulary.js';
import type { DestinationPolicy } from '../net/destination-policy.js';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/**
 * The URL normalised, or why it is refused. `what` names the receivers in the live-https
 * refusal (`live endpoints must use https`).
 */
export function webhookUrlCheck(
  url: string,
  mode: Mode,
  destinations: DestinationPolicy,
  what: string,
): { readonly href: string } | { readonly refusal: string } {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) return { refusal: `longer than ${MAX_WEBHOOK_URL_LENGTH} characters` };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { refusal: 'not an absolute URL' };
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    return { refusal: 'the scheme must be https (or http in the sandbox)' };
  // Credentials in a URL end up in logs and proxies; the signature is the authentication.
  if (parsed.username !== '' || parsed.password !== '') return { refusal: 'the URL must not contain credentials' };
  if (parsed.hash !== '') return { refusal: 'the URL must not contain a fragment' };
  const refusal = destinations.refusalOf(parsed);
  if (refusal !== null) return { refusal };
  if (parsed.protocol === 'http:' && mode === 'live' && !destinations.reachesItself(parsed))
    return { refusal: `live ${what} must use https` };
  return { href: parsed.href };
}
