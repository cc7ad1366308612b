/**
 * Who a request acts for: the API key, its org and scopes, and the book (org and mode) it works
 * on. Authentication (http/authenticate.ts) makes it; the domain (trading, money movement) reads
 * it to scope every row to its book. Part of the core; imports only lib types.
 */
import type { Mode, Scope } from '../lib/auth/credential-vocabulary.js';

export interface Principal {
  readonly keyName: string;
  readonly orgId: string;
  readonly scopes: readonly Scope[];
  /** The book the request works on: the declared mode, which auth checked against the key. */
  readonly environment: Mode;
}
