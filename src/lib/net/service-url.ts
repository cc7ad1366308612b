/**
 * The URL of a service fxgate is configured to call (the v3 upstream, the shadowed legacy
 * service): http or https, without credentials, its path, query and fragment as the caller
 * allows. The caller throws its own error with the reason. Part of lib; pure.
 */

/**
 * `url` parsed, or `refuse` called with why it cannot be used: it is not a URL, not http(s),
 * `placeProblem` (what the caller allows of path, query and fragment) names a problem, or it
 * carries credentials; checked in that order.
 */
export function parseServiceUrl(
  url: string,
  placeProblem: (parsed: URL) => string | null,
  refuse: (reason: string) => never,
): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuse('not a URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return refuse('must start with http:// or https://');
  const problem = placeProblem(parsed);
  if (problem !== null) return refuse(problem);
  if (parsed.username !== '' || parsed.password !== '') return refuse('must not carry credentials');
  return parsed;
}
