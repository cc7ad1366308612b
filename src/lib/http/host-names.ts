/**
 * Host names as a request's `Host` header and a configured list write them: the name a server
 * compares, its port, case and trailing dot aside. Pure text; FXGATE_SANDBOX_HOSTS is checked
 * with it at start-up (lib/config.ts) and the gateway reads each request's Host with it.
 */

/**
 * The host name of a `Host` value (or a configured entry), as compared: its port dropped, lower
 * case, without a trailing dot; an IPv6 literal without its brackets. Null for a value that names
 * no host (empty, a path or credentials in it, a bad port).
 */
export function normaliseHostName(value: string): string | null {
  const text = value.trim();
  if (text === '' || /[\s/?#@\\]/.test(text)) return null;
  let name: string;
  let port: string | undefined;
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end < 0) return null;
    name = text.slice(1, end);
    const rest = text.slice(end + 1);
    if (rest !== '' && !rest.startsWith(':')) return null;
    port = rest === '' ? undefined : rest.slice(1);
  } else {
    const colon = text.indexOf(':');
    // More than one colon without brackets: a bare IPv6 address, which has no port.
    if (colon >= 0 && text.indexOf(':', colon + 1) < 0) {
      name = text.slice(0, colon);
      port = text.slice(colon + 1);
    } else {
      name = text;
    }
  }
  if (port !== undefined && !/^[0-9]{1,5}$/.test(port)) return null;
  const lower = name.toLowerCase().replace(/\.$/, '');
  return lower === '' ? null : lower;
}

/** What a configured entry is refused for, in words naming the fix; null when it is a host name. */
export function sandboxHostEntryProblem(entry: string): string | null {
  const shown = JSON.stringify(entry.slice(0, 64));
  if (normaliseHostName(entry) === null)
    return `${shown} is not a host name; list names such as sandbox.api.example.com, separated by commas`;
  const bracketed = entry.startsWith('[');
  const hasPort = bracketed ? /\]:/.test(entry) : entry.split(':').length === 2;
  if (hasPort) return `${shown} names a port; list the host name only (a request's Host is compared without its port)`;
  return null;
}
