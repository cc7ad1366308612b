/**
 * The registry of fxgate's internal errors: every error class the code throws to itself, its
 * operator or a CLI user (never to an API client: those are src/lib/errors/v3-error-catalog.ts's codes,
 * thrown as ApiError). Each class has a stable `FXGATE_*` code, registered in INTERNAL_ERRORS with
 * a one-line reason and what fixes it; docs/operations.md#internal-error-codes lists them. Library
 * code: it imports types only, and only from lib, so that every part may import it.
 */
import type BigNumber from 'bignumber.js';

import type { Mode } from '../auth/credential-vocabulary.js';
import type { ValidationIssue } from './validation-issues.js';

/** Every internal code: why it happens, in a line, and what fixes it. Codes are never renamed. */
export const INTERNAL_ERRORS = {
  FXGATE_ADMIN_TOKEN_REQUIRED: {
    reason: 'the admin listener would bind a non-loopback address without a token',
    fix: 'set FXGATE_ADMIN_TOKEN or FXGATE_ADMIN_TOKEN_FILE, or bind FXGATE_ADMIN_HOST to 127.0.0.1',
  },
  FXGATE_CLI_FAILED: {
    reason: 'a CLI command could not do what it was asked',
    fix: 'read the message: it names the input or the dependency to fix, then run the command again',
  },
  FXGATE_CONFIG_INVALID: {
    reason: 'the configuration (environment, files) has invalid or conflicting settings',
    fix: 'correct each setting the message lists (docs/operations.md#configuration) and start again',
  },
  FXGATE_CREDIT_LINE_BELOW_COMMITTED: {
    reason: "a credit line was set below what the org's unsettled trades commit",
    fix: 'set a line at least the committed amount, or settle trades first',
  },
  FXGATE_CURSOR_REJECTED: {
    reason: 'v3 refused a cursor the gateway had cached for a legacy page',
    fix: 'nothing: the gateway walks the list again from its start',
  },
  FXGATE_DATA_DIR_LOCKED: {
    reason: 'another fxgate process holds the embedded database of this data folder',
    fix: 'stop the process the message names, or give this one another FXGATE_DATA_DIR',
  },
  FXGATE_DESTINATION_REFUSED: {
    reason: 'an outbound destination (webhook URL, upstream) is outside the allowed networks',
    fix: "use a public address, or add the receiver's network to FXGATE_WEBHOOK_ALLOWED_NETWORKS",
  },
  FXGATE_DIFF_DEPLOYMENT_FAILED: {
    reason: '`fxgate diff` could not start or reach a deployment it compares',
    fix: 'check the deployment URLs and keys the command was given, and that both answer',
  },
  FXGATE_DIFF_SCENARIO_FAILED: {
    reason: 'a `fxgate diff` scenario could not set up the records it compares',
    fix: 'give the diff key the scopes it needs (view, trade, withdraw) and a funded sandbox org',
  },
  FXGATE_DOCS_MARKER_MISSING: {
    reason: 'a document lacks the markers of a section fxgate generates',
    fix: 'restore the `<!-- generated:NAME -->` ... `<!-- /generated:NAME -->` pair, then `fxgate docs --write`',
  },
  FXGATE_DOCS_SECTION_UNKNOWN: {
    reason: 'a document has generated-section markers that nothing generates',
    fix: 'remove the markers, or spell the section as one fxgate generates',
  },
  FXGATE_FAILPOINT: {
    reason: 'a failpoint set for a test fired',
    fix: 'unset the failpoint; production never sets one',
  },
  FXGATE_INVALID_CIDR: {
    reason: 'an allowed-address entry is not an IPv4 or IPv6 address or CIDR block',
    fix: 'write each entry as an address or a block, e.g. 203.0.113.0/24',
  },
  FXGATE_INVALID_CREDIT_LINE: {
    reason: 'a credit line amount is not a valid non-negative USD amount',
    fix: 'give a non-negative decimal USD amount',
  },
  FXGATE_INVALID_DECIMAL: {
    reason: 'text that should be a decimal amount is not one',
    fix: 'write the amount as a plain decimal string, e.g. "1250.50"',
  },
  FXGATE_INVALID_KEY_REGISTRATION: {
    reason: 'an API key registration is incomplete or inconsistent',
    fix: 'correct the field the message names and register the key again',
  },
  FXGATE_INVALID_PAIR: {
    reason: 'a currency pair names the same currency twice',
    fix: 'name two different currencies',
  },
  FXGATE_INVALID_PRICE_INPUT: {
    reason: 'the pricing function was called with an invalid input',
    fix: 'a bug in the caller: report it with the field the message names',
  },
  FXGATE_INVALID_RATE_TABLE: {
    reason: 'the rate table (FXGATE_RATES) is invalid',
    fix: 'correct each problem the message lists in FXGATE_RATES or the file it names',
  },
  FXGATE_JSON_PATH_SYNTAX: {
    reason: 'a legacy mapping names a JSON path that is not of the form key.key[].*',
    fix: 'correct the path in the mapping table',
  },
  FXGATE_KEY_IMPORT_CONFLICT: {
    reason: 'a key file imports keys that clash with registered ones',
    fix: 'remove or rename the clashing records, or revoke the registered keys first',
  },
  FXGATE_KEY_IMPORT_FAILED: {
    reason: 'a key file could not be imported',
    fix: 'fix the lines the message lists; nothing of the file was registered',
  },
  FXGATE_KEY_IMPORT_INVALID: {
    reason: 'a key file has invalid records',
    fix: 'fix the lines the message lists (file:line: field: problem) and import it again',
  },
  FXGATE_LEDGER_UNBALANCED: {
    reason: 'a ledger movement whose entries do not sum to zero was refused',
    fix: 'a bug in the caller: no money moved; report it with the currency the message names',
  },
  FXGATE_LEGACY_GENERATION_RETIRED: {
    reason: 'a legacy generation is in a brownout or past its sunset',
    fix: 'move the client to v3 (docs/v3-guide.md), or change the retirement settings (docs/operations.md#retiring-v1)',
  },
  FXGATE_LEGACY_JSON_PARSE: {
    reason: "a legacy client's body is not acceptable JSON",
    fix: 'the client must send valid JSON without duplicate keys and with in-range numbers',
  },
  FXGATE_LEGACY_JSON_WRITE: {
    reason: 'a legacy answer could not be written as JSON',
    fix: 'a bug in the mapping: report it with the location the message names',
  },
  FXGATE_LEGACY_MAPPING_INVALID: {
    reason: 'a legacy mapping table is invalid',
    fix: 'correct each problem the message lists in the table under mappings/',
  },
  FXGATE_LEGACY_WEBHOOK_OPTIONS_INVALID: {
    reason: "the legacy webhooks' settings are invalid",
    fix: 'correct the setting the message names',
  },
  FXGATE_LEGACY_WEBHOOK_REGISTRATION_FAILED: {
    reason: "the gateway could not register its webhook receiver with v3 for an org's mode",
    fix: "check FXGATE_GATEWAY_WEBHOOK_URL and the org's upstream credential; it is retried",
  },
  FXGATE_NETWORK_LIST_INVALID: {
    reason: 'a network list setting has entries that are not networks',
    fix: 'write each entry as an address or CIDR block, comma-separated',
  },
  FXGATE_OPERATIONS_DETACHED: {
    reason: 'operations built only for their OpenAPI declarations were asked to serve a request',
    fix: 'a bug: serve requests with the operations the server builds',
  },
  FXGATE_ORG_BOOK_NOT_FOUND: {
    reason: 'no book exists for the org and environment',
    fix: 'check the org id; an org has a book once it is created',
  },
  FXGATE_PAGE_SNAPSHOT_MISMATCH: {
    reason: 'a v3 list changed under a legacy page walk',
    fix: 'nothing: the gateway walks the list again from its start',
  },
  FXGATE_PAGE_WALK_FAILED: {
    reason: 'the gateway could not walk the v3 list behind a legacy page',
    fix: 'retry; if it persists, check that v3 answers its list operations',
  },
  FXGATE_READINESS_TIMEOUT: {
    reason: 'a readiness probe got no answer in time',
    fix: 'check that the dependency the probe names is up and reachable',
  },
  FXGATE_SEALED_SECRET: {
    reason: 'a sealed secret could not be sealed or opened with the keyring',
    fix: 'check that FXGATE_SECRETS_KEY (or FXGATE_SECRETS_KEY_FILE) holds the key that sealed it',
  },
  FXGATE_SHADOW_TIMEOUT: {
    reason: 'the legacy service did not answer a shadow call in time',
    fix: 'check the legacy service FXGATE_SHADOW_URL names',
  },
  FXGATE_SHADOW_URL_INVALID: {
    reason: "the legacy service's URL for shadow traffic is invalid",
    fix: 'correct FXGATE_SHADOW_URL as the message says',
  },
  FXGATE_STORE_CORRUPT_RECORD: {
    reason: 'a stored record could not be read back',
    fix: 'the record is dropped; if it recurs, check what else writes under the key prefix',
  },
  FXGATE_STORE_INVALID_INPUT: {
    reason: 'the ephemeral store was given a key or value it cannot hold',
    fix: 'a bug in the caller: report it with the message',
  },
  FXGATE_STORE_UNAVAILABLE: {
    reason: 'the ephemeral store (Redis) did not answer',
    fix: 'check REDIS_URL and that Redis is up',
  },
  FXGATE_STRICT_JSON: {
    reason: 'a JSON text is invalid or has a duplicate or forbidden key',
    fix: 'send valid JSON without duplicate or forbidden keys',
  },
  FXGATE_TIME_TEXT_INVALID: {
    reason: 'a time or duration given as text could not be read',
    fix: 'write the time as the example in the message shows',
  },
  FXGATE_TOKEN_INVALID: {
    reason: 'a JWT was refused (malformed, unknown key, bad signature or expired)',
    fix: "sign a fresh token with the key's private key (docs/v3-guide.md)",
  },
  FXGATE_TRACING_CONFIG_INVALID: {
    reason: 'the tracing settings (OTEL_*) are invalid',
    fix: 'correct the OTEL_* variable the message names',
  },
  FXGATE_UNKNOWN_CURRENCY: {
    reason: 'a currency code is not one fxgate trades',
    fix: 'use a currency of the rate table',
  },
  FXGATE_UNKNOWN_CURRENCY_RATE: {
    reason: 'the rate table has no USD price for a currency',
    fix: 'add the currency to the rate file',
  },
  FXGATE_UPSTREAM_CREDENTIAL_BAD_REQUEST: {
    reason: 'a request for an upstream credential named no valid org or mode',
    fix: 'a bug in the caller: report it with the org and mode the message names',
  },
  FXGATE_UPSTREAM_CREDENTIAL_INVALID: {
    reason: "the gateway's v3 key file for an org's mode is unreadable or invalid",
    fix: "replace the org's key file in FXGATE_UPSTREAM_KEYS_DIR",
  },
  FXGATE_UPSTREAM_CREDENTIAL_MISSING: {
    reason: "the gateway has no v3 key for an org's mode",
    fix: "put the org's key file in FXGATE_UPSTREAM_KEYS_DIR",
  },
  FXGATE_UPSTREAM_DEADLINE: {
    reason: 'v3 did not finish an answer within the passthrough deadline',
    fix: 'check v3, or raise FXGATE_UPSTREAM_DEADLINE_MS',
  },
  FXGATE_UPSTREAM_INVALID: {
    reason: 'an upstream URL setting is invalid',
    fix: 'correct the upstream URL (FXGATE_UPSTREAM_URL) as the message says',
  },
  FXGATE_UPSTREAM_PROTOCOL: {
    reason: 'v3 answered something that is not a v3 answer',
    fix: 'check that FXGATE_UPSTREAM_URL names the v3 API and not another service',
  },
  FXGATE_UPSTREAM_TIMEOUT: {
    reason: 'v3 did not answer in time',
    fix: 'check v3, or raise FXGATE_UPSTREAM_TIMEOUT_MS',
  },
  FXGATE_UPSTREAM_UNREACHABLE: {
    reason: 'v3 could not be reached (refused, unresolvable, connect timeout)',
    fix: 'check FXGATE_UPSTREAM_URL and that v3 is up',
  },
  FXGATE_USAGE_QUERY_INVALID: {
    reason: 'a usage query has an invalid generation, window or filter',
    fix: 'correct the option the message names',
  },
  FXGATE_V3_CONTRACT_VIOLATION: {
    reason: 'a v3 answer breaks the v3 contract the gateway translates from',
    fix: 'check that FXGATE_UPSTREAM_URL names a v3 of the version this gateway supports',
  },
  FXGATE_WEBHOOK_SUBSCRIPTION_INVALID: {
    reason: 'a legacy webhook subscription has an invalid URL or event list',
    fix: "correct the subscription's URL or events as the message says",
  },
  FXGATE_WITHDRAWAL_ACCOUNT_CHANGING: {
    reason: "a withdrawal's account changed every time the withdrawal read it, so nothing was written",
    fix: 'nothing: the client gets WITHDRAWAL_INITIATION_FAILED and retries with the same Idempotency-Key',
  },
} as const satisfies Record<`FXGATE_${string}`, { readonly reason: string; readonly fix: string }>;

export type InternalErrorCode = keyof typeof INTERNAL_ERRORS;

/** The base of every internal error: `code` is stable and registered, the message is for people. */
export abstract class FxgateError extends Error {
  abstract readonly code: InternalErrorCode;
  /** Named after the class thrown, so that no subclass repeats its own name. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The base of a class with one code, so that the class states its code once, in its heading. */
export function withCode<const Code extends InternalErrorCode>(code: Code) {
  abstract class CodedError extends FxgateError {
    readonly code: Code = code;
  }
  return CodedError;
}

/** The registered reason and fix of an internal error's code. */
export function internalErrorHelp(error: FxgateError): { readonly reason: string; readonly fix: string } {
  return INTERNAL_ERRORS[error.code];
}

// ---- lib ----

export class AdminTokenRequiredError extends withCode('FXGATE_ADMIN_TOKEN_REQUIRED') {
  constructor(
    readonly host: string,
    minLength: number,
  ) {
    super(
      `the admin listener would bind ${host}, which is not a loopback address, and FXGATE_ADMIN_TOKEN is not set: ` +
        `it serves org ids, key names and client addresses, so off loopback it needs a token. ` +
        `Set FXGATE_ADMIN_TOKEN (at least ${minLength} characters, e.g. \`openssl rand -base64 32\`) ` +
        `or FXGATE_ADMIN_TOKEN_FILE (a file holding it), ` +
        `or bind it to 127.0.0.1 (FXGATE_ADMIN_HOST), or turn it off (FXGATE_ADMIN_PORT=off)`,
    );
  }
}

export class NetworkListError extends withCode('FXGATE_NETWORK_LIST_INVALID') {
  constructor(readonly problems: readonly string[]) {
    super(`invalid network list: ${problems.join('; ')}`);
  }
}

export class DestinationRefusedError extends withCode('FXGATE_DESTINATION_REFUSED') {
  constructor(readonly reason: string) {
    super(`refused: ${reason}`);
  }
}

export class TokenVerificationError extends withCode('FXGATE_TOKEN_INVALID') {
  constructor(
    readonly failure: TokenFailure,
    message: string,
  ) {
    super(message);
  }
}

export class TracingConfigError extends withCode('FXGATE_TRACING_CONFIG_INVALID') {}

export class ReadinessTimeoutError extends withCode('FXGATE_READINESS_TIMEOUT') {
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

export class ConfigError extends withCode('FXGATE_CONFIG_INVALID') {
  constructor(
    readonly problems: string[],
    advice?: string,
  ) {
    super(
      `invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}${advice === undefined ? '' : `\n${advice}`}`,
    );
  }
}

export class SealedSecretError extends withCode('FXGATE_SEALED_SECRET') {}

export class TimeTextError extends withCode('FXGATE_TIME_TEXT_INVALID') {}

export class InvalidDecimalError extends withCode('FXGATE_INVALID_DECIMAL') {
  constructor(readonly input: string) {
    super(`not a decimal amount: ${JSON.stringify(input.slice(0, 64))}`);
  }
}

export type StrictJsonReason = 'invalid_json' | 'duplicate_key' | 'forbidden_key';

export class StrictJsonError extends withCode('FXGATE_STRICT_JSON') {
  constructor(
    readonly reason: StrictJsonReason,
    /** The key's path, or '' for the text as a whole. */
    readonly path: string,
    /** UTF-16 offset in the text where the problem is, when known. */
    readonly offset: number | null,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** As `details.issues[]` reports it. */
  toIssue(): ValidationIssue {
    return { path: this.path, code: this.reason, message: this.message };
  }
}

export class CorruptStoreRecordError extends withCode('FXGATE_STORE_CORRUPT_RECORD') {}

export class StoreUnavailableError extends withCode('FXGATE_STORE_UNAVAILABLE') {}

export class InvalidStoreInputError extends withCode('FXGATE_STORE_INVALID_INPUT') {}

export class InvalidCidrError extends withCode('FXGATE_INVALID_CIDR') {
  constructor(readonly cidr: string) {
    super(`not an IPv4 or IPv6 address or CIDR block: ${cidr}`);
  }
}

export class InvalidKeyRegistrationError extends withCode('FXGATE_INVALID_KEY_REGISTRATION') {}

/** What is wrong with one record: its line (null for the file as a whole), its field (null for the record). */
export interface KeyImportProblem {
  readonly line: number | null;
  readonly field: string | null;
  readonly message: string;
}

/** Enough to fix a file in a few rounds; a file of thousands of bad lines would flood the terminal. */
const MAX_PROBLEMS_SHOWN = 20;

function moreProblems(count: number): string {
  return count > MAX_PROBLEMS_SHOWN ? `\n  ... and ${count - MAX_PROBLEMS_SHOWN} more` : '';
}

/** `file:line: field: message`, as compilers write it, so editors can jump to the line. */
function describeProblem(file: string, problem: KeyImportProblem): string {
  const where = problem.line === null ? file : `${file}:${problem.line}`;
  return `${where}: ${problem.field === null ? '' : `${problem.field}: `}${problem.message}`;
}

/** A file that was not imported, and why; nothing of it was registered. */
export class KeyImportError extends FxgateError {
  readonly code: 'FXGATE_KEY_IMPORT_FAILED' | 'FXGATE_KEY_IMPORT_INVALID' | 'FXGATE_KEY_IMPORT_CONFLICT' =
    'FXGATE_KEY_IMPORT_FAILED';
  constructor(
    readonly file: string,
    readonly problems: readonly KeyImportProblem[],
  ) {
    super(
      `${file}: nothing imported:\n${problems
        .slice(0, MAX_PROBLEMS_SHOWN)
        .map((problem) => `  - ${describeProblem(file, problem)}`)
        .join('\n')}${moreProblems(problems.length)}`,
    );
    // Its subclasses differ by code only, so they keep this name.
    this.name = 'KeyImportError';
  }
}

/** Records that are not valid keys (bad fields, bad lines). */
export class KeyImportInvalidError extends KeyImportError {
  override readonly code = 'FXGATE_KEY_IMPORT_INVALID';
}

/** Records that clash with keys already registered. */
export class KeyImportConflictError extends KeyImportError {
  override readonly code = 'FXGATE_KEY_IMPORT_CONFLICT';
}

export class FailpointError extends withCode('FXGATE_FAILPOINT') {
  constructor(readonly point: string) {
    super(`failpoint ${point} triggered`);
  }
}

export class MissingMarkerError extends withCode('FXGATE_DOCS_MARKER_MISSING') {
  constructor(
    readonly file: string,
    readonly section: string,
  ) {
    super(`${file} has no <!-- generated:${section} --> ... <!-- /generated:${section} --> markers`);
  }
}

export class UnknownSectionError extends withCode('FXGATE_DOCS_SECTION_UNKNOWN') {
  constructor(
    readonly file: string,
    readonly section: string,
  ) {
    super(`${file} has a <!-- generated:${section} --> section that nothing generates`);
  }
}

// ---- core ----

export class DetachedContextError extends withCode('FXGATE_OPERATIONS_DETACHED') {
  constructor(readonly member: string) {
    super(`${member}: these operations were built for their declarations and cannot serve requests`);
  }
}

export type OrgBookErrorCode = Extract<
  InternalErrorCode,
  | 'FXGATE_ORG_BOOK_NOT_FOUND'
  | 'FXGATE_INVALID_CREDIT_LINE'
  | 'FXGATE_CREDIT_LINE_BELOW_COMMITTED'
  | 'FXGATE_UNKNOWN_CURRENCY'
  | 'FXGATE_INVALID_PAIR'
>;

/** The operator-side failures of the org books; `code` is stable, the message is for people. */
export abstract class OrgBookError extends FxgateError {
  abstract override readonly code: OrgBookErrorCode;
}

export class OrgBookNotFoundError extends OrgBookError {
  readonly code = 'FXGATE_ORG_BOOK_NOT_FOUND';
  constructor(
    readonly orgId: string,
    readonly environment: Mode,
  ) {
    super(`org ${orgId} has no ${environment} book (no such org)`);
  }
}

export class InvalidCreditLineError extends OrgBookError {
  readonly code = 'FXGATE_INVALID_CREDIT_LINE';
  constructor(
    readonly amountUsd: string,
    reason: string,
  ) {
    super(`invalid credit line ${amountUsd} USD: ${reason}`);
  }
}

/** Why a token was refused (src/lib/auth/jwt.ts maps each to its v3 code). */
export type TokenFailure =
  | 'TOKEN_MALFORMED' // not a compact JWS, wrong alg or typ, bad nonce, bad claims
  | 'KEY_MISSING' // no kid
  | 'KEY_UNKNOWN' // kid names no usable key
  | 'SIGNATURE_INVALID'
  | 'EXPIRED'
  | 'LIFETIME_TOO_LONG';

/** A decimal of src/lib/money.ts (a BigNumber), named here without importing that module, which imports this one. */
type Decimal = BigNumber;

/** As src/lib/money.ts's formatDecimal writes it (that module imports this one). */
function decimalText(value: Decimal): string {
  return value.isZero() ? '0' : value.toFixed();
}

export class CreditLineBelowCommittedError extends OrgBookError {
  readonly code = 'FXGATE_CREDIT_LINE_BELOW_COMMITTED';
  constructor(
    readonly orgId: string,
    readonly environment: Mode,
    readonly amountUsd: Decimal,
    readonly committedUsd: Decimal,
  ) {
    super(
      `the ${environment} credit line of org ${orgId} cannot be ${decimalText(amountUsd)} USD: ` +
        `${decimalText(committedUsd)} USD is committed to unsettled trades now`,
    );
  }
}

export class UnknownCurrencyError extends OrgBookError {
  readonly code = 'FXGATE_UNKNOWN_CURRENCY';
  constructor(readonly currency: string) {
    super(`unknown currency ${JSON.stringify(currency)}`);
  }
}

export class InvalidPairError extends OrgBookError {
  readonly code = 'FXGATE_INVALID_PAIR';
  constructor(
    readonly buyCurrency: string,
    readonly sellCurrency: string,
  ) {
    super(`a pair is two different currencies, not ${buyCurrency}/${sellCurrency}`);
  }
}

export class InvalidPriceInputError extends withCode('FXGATE_INVALID_PRICE_INPUT') {
  constructor(
    /** The PriceInput field (src/core/trading/pricing.ts). */
    readonly field: string,
    detail: string,
  ) {
    super(`invalid pricing input ${field}: ${detail}`);
  }
}

export class InvalidRateTableError extends withCode('FXGATE_INVALID_RATE_TABLE') {
  constructor(readonly problems: readonly string[]) {
    super(`invalid rate table:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export class UnknownCurrencyRateError extends withCode('FXGATE_UNKNOWN_CURRENCY_RATE') {
  constructor(readonly currency: string) {
    super(`no USD price for currency ${JSON.stringify(currency.slice(0, 16))}`);
  }
}

export class UnbalancedMovementError extends withCode('FXGATE_LEDGER_UNBALANCED') {
  constructor(
    readonly currency: string,
    readonly sum: string,
  ) {
    super(`ledger movement does not balance in ${currency}: entries sum to ${sum}`);
  }
}

export class AccountChangingError extends withCode('FXGATE_WITHDRAWAL_ACCOUNT_CHANGING') {
  constructor(
    readonly accountId: string,
    readonly reads: number,
  ) {
    super(`withdrawal account ${accountId} changed under each of ${reads} reads; no withdrawal was written`);
  }
}

// ---- gateway ----

export type UpstreamCredentialErrorCode = Extract<
  InternalErrorCode,
  'FXGATE_UPSTREAM_CREDENTIAL_MISSING' | 'FXGATE_UPSTREAM_CREDENTIAL_INVALID' | 'FXGATE_UPSTREAM_CREDENTIAL_BAD_REQUEST'
>;

/** Why the gateway has no usable v3 credential for an org and mode; `code` is stable. */
export class UpstreamCredentialError extends FxgateError {
  constructor(
    readonly code: UpstreamCredentialErrorCode,
    readonly orgId: string,
    readonly mode: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The passthrough's total bound on one upstream answer ran out (the relay aborts the call with it). */
export class UpstreamDeadlineError extends withCode('FXGATE_UPSTREAM_DEADLINE') {
  constructor(readonly deadlineMs: number) {
    super(`the upstream did not finish its answer within the ${deadlineMs} ms deadline`);
  }
}

export class InvalidUpstreamError extends withCode('FXGATE_UPSTREAM_INVALID') {
  constructor(
    readonly url: string,
    reason: string,
  ) {
    super(`invalid upstream ${url}: ${reason}`);
  }
}

export type UpstreamErrorCode = Extract<
  InternalErrorCode,
  'FXGATE_UPSTREAM_UNREACHABLE' | 'FXGATE_UPSTREAM_TIMEOUT' | 'FXGATE_UPSTREAM_PROTOCOL'
>;

/** A call to v3 that got no v3 answer. */
export abstract class UpstreamError extends FxgateError {
  abstract override readonly code: UpstreamErrorCode;
  /** False only when the request certainly never reached v3. */
  abstract readonly mayHaveReachedUpstream: boolean;
}

export class UpstreamUnreachableError extends UpstreamError {
  readonly code = 'FXGATE_UPSTREAM_UNREACHABLE';
  readonly mayHaveReachedUpstream = false;
}

export class UpstreamTimeoutError extends UpstreamError {
  readonly code = 'FXGATE_UPSTREAM_TIMEOUT';
  readonly mayHaveReachedUpstream = true;
  /** The call's total deadline ran out, rather than a timeout of the dispatcher or the connection. */
  readonly deadline: boolean;
  constructor(message: string, options?: { cause?: unknown; deadline?: boolean }) {
    super(message, options);
    this.deadline = options?.deadline ?? false;
  }
}

export class UpstreamProtocolError extends UpstreamError {
  readonly code = 'FXGATE_UPSTREAM_PROTOCOL';
  readonly mayHaveReachedUpstream = true;
  constructor(
    message: string,
    /** The upstream's status, when it answered one. */
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class UsageQueryError extends withCode('FXGATE_USAGE_QUERY_INVALID') {}

export class InvalidLegacyServiceUrlError extends withCode('FXGATE_SHADOW_URL_INVALID') {
  constructor(url: string, reason: string) {
    super(`invalid legacy service URL ${url}: ${reason}`);
  }
}

export class LegacyTimeoutError extends withCode('FXGATE_SHADOW_TIMEOUT') {
  constructor(timeoutMs: number) {
    super(`the legacy service did not answer within ${timeoutMs} ms`);
  }
}

export class RegistrationError extends withCode('FXGATE_LEGACY_WEBHOOK_REGISTRATION_FAILED') {
  /** The code of v3's refusal, when v3 refused. */
  readonly v3Code: string | null;
  constructor(
    readonly orgId: string,
    readonly mode: Mode,
    message: string,
    options?: { cause?: unknown; v3Code?: string },
  ) {
    super(message, options);
    this.v3Code = options?.v3Code ?? null;
  }
}

export class SubscriptionInputError extends withCode('FXGATE_WEBHOOK_SUBSCRIPTION_INVALID') {}

export class LegacyWebhookOptionsError extends withCode('FXGATE_LEGACY_WEBHOOK_OPTIONS_INVALID') {}

/** How a generation is refused: for a brownout's window, or for good. */
export type RetirementKind = 'brownout' | 'sunset';

/** A retired legacy generation's refusal: the legacy 410 and its body. */
export class GenerationRetired<Generation extends string = string> extends withCode(
  'FXGATE_LEGACY_GENERATION_RETIRED',
) {
  readonly status = 410;
  constructor(
    readonly kind: RetirementKind,
    readonly generation: Generation,
    message: string,
  ) {
    super(message);
  }

  /** The legacy error body, `{status: 'error', message}`. */
  get body(): string {
    return JSON.stringify({ status: 'error', message: this.message });
  }
}

export class LegacyMappingError extends withCode('FXGATE_LEGACY_MAPPING_INVALID') {
  constructor(
    readonly table: string,
    readonly problems: readonly string[],
  ) {
    super(
      `${table} is not a valid legacy mapping table (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n- ${problems.join('\n- ')}`,
    );
  }
}

export class V3ContractError extends withCode('FXGATE_V3_CONTRACT_VIOLATION') {
  constructor(
    readonly operation: string,
    readonly problems: readonly string[],
  ) {
    super(`the v3 answer for ${operation} breaks the v3 contract: ${problems.join('; ')}`);
  }
}

export type LegacyJsonParseReason =
  'MALFORMED_JSON' | 'DUPLICATE_KEY' | 'FORBIDDEN_KEY' | 'TOO_DEEP' | 'INVALID_NUMBER' | 'NUMBER_OUT_OF_RANGE';

/** The client's body is not acceptable JSON: the legacy 400 (Query validation failed). */
export class LegacyJsonParseError extends withCode('FXGATE_LEGACY_JSON_PARSE') {
  constructor(
    readonly reason: LegacyJsonParseReason,
    /** Where in the body, e.g. `amount` or `data[2].amount`; empty for the whole text. */
    readonly location: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${reason}${location === '' ? '' : ` at ${location}`}: ${detail}`, options);
  }
}

export type LegacyJsonWriteReason = 'NOT_A_DECIMAL_STRING' | 'UNSAFE_NUMBER' | 'UNSUPPORTED_VALUE' | 'TOO_DEEP';

export class LegacyJsonWriteError extends withCode('FXGATE_LEGACY_JSON_WRITE') {
  constructor(
    readonly reason: LegacyJsonWriteReason,
    readonly location: string,
    detail: string,
  ) {
    super(`${reason}${location === '' ? '' : ` at ${location}`}: ${detail}`);
  }
}

export class JsonPathSyntaxError extends withCode('FXGATE_JSON_PATH_SYNTAX') {
  constructor(readonly path: string) {
    super(`not a JSON path of the form key.key[].*: ${JSON.stringify(path)}`);
  }
}

export class CursorRejectedError extends withCode('FXGATE_CURSOR_REJECTED') {
  constructor(message = 'v3 refused a cached cursor', options?: { cause?: unknown }) {
    super(message, options);
  }
}

export class PageWalkError extends withCode('FXGATE_PAGE_WALK_FAILED') {}

export class SnapshotMismatchError extends withCode('FXGATE_PAGE_SNAPSHOT_MISMATCH') {}

// ---- cli ----

/**
 * How the CLI ends: 0 success; 1 the command failed (a dependency, a conflict); 2 the input was
 * wrong (arguments, configuration), so running it again unchanged cannot help.
 */
export const EXIT_CODES = { ok: 0, failure: 1, usage: 2 } as const;
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

/** The one error class CLI commands throw to end with a message and an exit code. */
export class CliError extends withCode('FXGATE_CLI_FAILED') {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT_CODES.failure,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class DataDirLockedError extends withCode('FXGATE_DATA_DIR_LOCKED') {
  constructor(
    readonly lockPath: string,
    readonly pid: number,
  ) {
    super(`another fxgate process (pid ${pid}) is using the embedded database (lock file ${lockPath})`);
  }
}

export class DeploymentError extends withCode('FXGATE_DIFF_DEPLOYMENT_FAILED') {}

export class ScenarioError extends withCode('FXGATE_DIFF_SCENARIO_FAILED') {}
