/**
 * Sandbox host names (FXGATE_SANDBOX_HOSTS): the legacy service told sandbox from live by the
 * host a client called, and the public v1 examples send no `X-App-Mode`, so a legacy request to
 * one of these names that declares no mode works on the sandbox book. Pure: it reads a Host value
 * and the configured names, touches nothing else. The rules that use it are in auth.ts.
 */
import { normaliseHostName } from '../../../lib/http/host-names.js';

/** The configured names, and the test of a request's `Host` against them. */
export class SandboxHosts {
  private readonly names: ReadonlySet<string>;

  constructor(entries: readonly string[]) {
    this.names = new Set(entries.map((entry) => normaliseHostName(entry)).filter((name) => name !== null));
  }

  get size(): number {
    return this.names.size;
  }

  /** True when the Host value names one of the sandbox hosts (port, case and a trailing dot aside). */
  includes(host: string | undefined): boolean {
    if (host === undefined || this.names.size === 0) return false;
    const name = normaliseHostName(host);
    return name !== null && this.names.has(name);
  }
}
