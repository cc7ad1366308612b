/**
 * Importing API keys that integrators already hold (`fxgate keys import`): their public halves
 * are registered under their existing names, so the tokens the integrators sign today keep
 * working unchanged. A file is read and checked whole first, then registered in one
 * transaction: it is imported entirely or not at all. An import never replaces a registered
 * key; the same record again is reported unchanged, so running an import twice is safe.
 *
 * A file holds one JSON object, a JSON array of objects, or one object per line (JSON lines),
 * each `{name, orgId, publicKey, scopes, mode, ipAllowlist?}`:
 *   - `name` `org/{orgId}/apiKey/{keyId}` of the record's own `orgId` (stored in lower case, as
 *     every key name is);
 *   - `publicKey` an SPKI PEM EC P-256 key (every fxgate token is ES256);
 *   - `scopes` fxgate's words or the legacy dashboard's, any case, an array or comma-separated:
 *     `view`; `trade`, which also grants `view` (the dashboard's Trade covers the trade history
 *     and balances); `withdraw`; `webhooks`;
 *   - `mode` `sandbox` or `live`, any case;
 *   - `ipAllowlist` addresses or CIDR blocks, as `keys create --ip` takes them; none: any address.
 * A record with a `privateKey` is refused: a private key never leaves its owner.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';

import { type Mode, MODES, parseKeyName, type Scope, SCOPES } from '../lib/auth/credential-vocabulary.js';
import type { Database, Queryable } from '../lib/db/database.js';
import {
  InvalidCidrError,
  KeyImportConflictError,
  KeyImportInvalidError,
  type KeyImportProblem,
  StrictJsonError,
} from '../lib/errors/internal-errors.js';
import { parseStrictJson } from '../lib/json/strict-json.js';
import { ensureOrgIn, normaliseCidrs } from '../lib/keys/key-registry.js';

/** One key to register, checked and in the registry's spelling. */
export interface KeyImportRecord {
  /** Where the record starts in its file (1-based). */
  readonly line: number;
  readonly name: string;
  readonly orgId: string;
  readonly keyId: string;
  /** The public key re-encoded as SPKI PEM, so equal keys are stored alike. */
  readonly publicKeyPem: string;
  readonly scopes: readonly Scope[];
  readonly mode: Mode;
  readonly ipAllowlist: readonly string[];
}

export type KeyImportOutcome = 'imported' | 'unchanged';

export interface KeyImportResult {
  readonly name: string;
  readonly outcome: KeyImportOutcome;
}

export interface KeyImportFileResult {
  readonly file: string;
  readonly keys: readonly KeyImportResult[];
}

const FIELDS = ['name', 'orgId', 'publicKey', 'scopes', 'mode', 'ipAllowlist'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SPKI_PEM = /^-----BEGIN PUBLIC KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PUBLIC KEY-----$/;
const FORMAT_HINT = 'a file holds one JSON object, a JSON array of objects, or one JSON object per line';
const PUBLIC_KEY_HINT = 'export it with `openssl pkey -in key.pem -pubout`';

/**
 * Each word's scopes. `trade` grants `view` too, in any case: the legacy dashboard's Trade
 * covers the trade history and balances, and its keys must keep reading them.
 */
const SCOPE_WORDS: ReadonlyMap<string, readonly Scope[]> = new Map<string, readonly Scope[]>([
  ['view', ['view']],
  ['trade', ['view', 'trade']],
  ['withdraw', ['withdraw']],
  ['webhooks', ['webhooks']],
]);

/** A JSON value and the line where it starts. */
interface RawRecord {
  readonly line: number;
  readonly value: unknown;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i += 1) if (text.charCodeAt(i) === 10) line += 1;
  return line;
}

/** The line of a parse failure: a repeated or `__proto__` key's own, or where JSON.parse's message says it stopped. */
function parseFailure(text: string, error: unknown, lineOffset = 0): KeyImportProblem {
  if (error instanceof StrictJsonError && error.reason !== 'invalid_json')
    return {
      line: lineOffset + lineAt(text, error.offset ?? 0),
      field: error.path,
      message: `${error.message}: a record must say one thing to every reader`,
    };
  const message = error instanceof Error ? error.message : String(error);
  const position = /position (\d+)/.exec(message);
  return {
    line: position ? lineOffset + lineAt(text, Number(position[1])) : lineOffset + 1,
    field: null,
    message: `not valid JSON (${message}); ${FORMAT_HINT}`,
  };
}

/**
 * The line where each element of a top-level JSON array starts. Only for text that the parse
 * accepted, so the scan needs to know nothing but strings and nesting; one pass, however long
 * the file.
 */
function arrayElementLines(text: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let expectElement = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '\n') line += 1;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') continue;
    if (depth === 1 && expectElement && c !== ']') {
      lines.push(line);
      expectElement = false;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      depth += 1;
      if (depth === 1) expectElement = true;
    } else if (c === ']' || c === '}') depth -= 1;
    else if (c === ',' && depth === 1) expectElement = true;
  }
  return lines;
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: parseStrictJson(text) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** The file's values with their lines, in whichever of the three forms it is written. */
function splitRecords(text: string, problems: KeyImportProblem[]): RawRecord[] {
  const start = text.search(/\S/);
  if (start === -1) {
    problems.push({ line: null, field: null, message: `the file is empty; ${FORMAT_HINT}` });
    return [];
  }
  if (text[start] === '[') {
    const parsed = tryParse(text);
    if (!parsed.ok) {
      problems.push(parseFailure(text, parsed.error));
      return [];
    }
    const values = parsed.value as unknown[];
    if (values.length === 0)
      problems.push({ line: lineAt(text, start), field: null, message: 'the array holds no key records' });
    const lines = arrayElementLines(text);
    return values.map((value, index) => ({ line: lines[index] ?? lineAt(text, start), value }));
  }
  if (text[start] !== '{') {
    problems.push({ line: lineAt(text, start), field: null, message: FORMAT_HINT });
    return [];
  }
  // One object, possibly spread over several lines; otherwise one object per line.
  const whole = tryParse(text);
  if (whole.ok) return [{ line: lineAt(text, start), value: whole.value }];
  const lines = text.split('\n');
  const firstLine = lineAt(text, start) - 1;
  if (!tryParse(lines[firstLine]!).ok) {
    // Not JSON lines either: the first line is no object of its own, so this was meant as one object.
    problems.push(parseFailure(text, whole.error));
    return [];
  }
  const records: RawRecord[] = [];
  lines.forEach((lineText, index) => {
    if (lineText.trim() === '') return;
    const parsed = tryParse(lineText);
    if (parsed.ok) records.push({ line: index + 1, value: parsed.value });
    else problems.push(parseFailure(lineText, parsed.error, index));
  });
  return records;
}

function readName(
  record: Record<string, unknown>,
  problem: (field: string, message: string) => void,
): { name: string; orgId: string; keyId: string } | null {
  const name = record.name;
  const orgId = record.orgId;
  // The UUIDs in lower case, as the registry stores them; the literal parts stay as they must be.
  const spelt =
    typeof name === 'string'
      ? name
          .trim()
          .replace(
            /^org\/([^/]+)\/apiKey\/([^/]+)$/,
            (_match, org: string, key: string) => `org/${org.toLowerCase()}/apiKey/${key.toLowerCase()}`,
          )
      : null;
  const parts = spelt === null ? null : parseKeyName(spelt);
  if (parts === null) {
    problem(
      'name',
      "must be the key name org/{orgId}/apiKey/{keyId}, both UUIDs, as the integrator's tokens carry it in kid and sub",
    );
  }
  let org: string | null = null;
  if (typeof orgId !== 'string' || !UUID.test(orgId.trim().toLowerCase())) {
    problem('orgId', 'must be the org id, a UUID such as 0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c');
  } else {
    org = orgId.trim().toLowerCase();
  }
  if (parts === null || org === null) return null;
  if (parts.orgId !== org) {
    problem(
      'orgId',
      `${org} is not the org of the key name, ${parts.orgId}; a key belongs to the org its name gives, so one of the two was changed: take both from the original record`,
    );
    return null;
  }
  return { name: `org/${parts.orgId}/apiKey/${parts.keyId}`, orgId: parts.orgId, keyId: parts.keyId };
}

function describeKey(key: KeyObject): string {
  const curve = key.asymmetricKeyDetails?.namedCurve;
  return curve === undefined
    ? `an ${key.asymmetricKeyType ?? 'unknown'} key`
    : `an ${key.asymmetricKeyType ?? 'unknown'} key on ${curve}`;
}

function readPublicKey(value: unknown, problem: (field: string, message: string) => void): string | null {
  if (typeof value !== 'string') {
    problem('publicKey', `must be the public key as SPKI PEM text, -----BEGIN PUBLIC KEY----- ...; ${PUBLIC_KEY_HINT}`);
    return null;
  }
  const pem = value.trim();
  if (pem.includes('PRIVATE KEY')) {
    problem(
      'publicKey',
      `holds a private key, which never leaves its owner; put the public key here instead (${PUBLIC_KEY_HINT})`,
    );
    return null;
  }
  if (!SPKI_PEM.test(pem)) {
    problem(
      'publicKey',
      `must be SPKI PEM, -----BEGIN PUBLIC KEY----- ... -----END PUBLIC KEY-----, with the line breaks written \\n in JSON; ${PUBLIC_KEY_HINT}`,
    );
    return null;
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch (error) {
    problem(
      'publicKey',
      `is not a readable public key (${error instanceof Error ? error.message : String(error)}); ${PUBLIC_KEY_HINT}`,
    );
    return null;
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    problem('publicKey', `is ${describeKey(key)}; fxgate keys are EC P-256 (prime256v1), as every token is ES256`);
    return null;
  }
  return key.export({ type: 'spki', format: 'pem' }).toString();
}

function readScopes(value: unknown, problem: (field: string, message: string) => void): Scope[] | null {
  const words = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : null;
  const expected = `scopes are ${SCOPES.join(', ')} (any case; trade also grants view, as the dashboard's Trade did), as an array or comma-separated`;
  if (words === null || words.some((word) => typeof word !== 'string')) {
    problem('scopes', `must be a list of scope names; ${expected}`);
    return null;
  }
  const names = (words as string[]).map((word) => word.trim()).filter((word) => word !== '');
  if (names.length === 0) {
    problem('scopes', `name at least one scope; ${expected}`);
    return null;
  }
  const unknown = names.filter((name) => !SCOPE_WORDS.has(name.toLowerCase()));
  if (unknown.length > 0) {
    problem('scopes', `unknown scope ${unknown.map((name) => JSON.stringify(name)).join(', ')}; ${expected}`);
    return null;
  }
  const granted = new Set(names.flatMap((name) => SCOPE_WORDS.get(name.toLowerCase()) ?? []));
  // In SCOPES order, as `keys create` stores them, so equal sets compare equal.
  return SCOPES.filter((scope) => granted.has(scope));
}

function readMode(value: unknown, problem: (field: string, message: string) => void): Mode | null {
  const mode = typeof value === 'string' ? MODES.find((m) => m === value.trim().toLowerCase()) : undefined;
  if (mode === undefined) problem('mode', `must be ${MODES.join(' or ')} (any case)`);
  return mode ?? null;
}

function readAllowlist(value: unknown, problem: (field: string, message: string) => void): string[] | null {
  if (value === undefined || value === null) return [];
  const entries =
    typeof value === 'string'
      ? value.split(',').filter((entry) => entry.trim() !== '')
      : Array.isArray(value)
        ? value
        : null;
  if (entries === null || entries.some((entry) => typeof entry !== 'string')) {
    problem(
      'ipAllowlist',
      'must be a list of IPv4 or IPv6 addresses or CIDR blocks, e.g. ["203.0.113.0/24"]; leave it out for any address',
    );
    return null;
  }
  const normalised: string[] = [];
  for (const entry of entries as string[]) {
    try {
      normalised.push(...normaliseCidrs([entry]));
    } catch (error) {
      if (!(error instanceof InvalidCidrError)) throw error;
      problem(
        'ipAllowlist',
        `${JSON.stringify(entry)} is not an IPv4 or IPv6 address or CIDR block, e.g. 203.0.113.0/24`,
      );
      return null;
    }
  }
  return [...new Set(normalised)];
}

function readRecord(raw: RawRecord, problems: KeyImportProblem[]): KeyImportRecord | null {
  const before = problems.length;
  const problem = (field: string, message: string) => problems.push({ line: raw.line, field, message });
  if (typeof raw.value !== 'object' || raw.value === null || Array.isArray(raw.value)) {
    problems.push({
      line: raw.line,
      field: null,
      message: `a key record is a JSON object {name, orgId, publicKey, scopes, mode, ipAllowlist?}; ${FORMAT_HINT}`,
    });
    return null;
  }
  const record = raw.value as Record<string, unknown>;
  if ('privateKey' in record) {
    problem(
      'privateKey',
      `a private key never leaves its owner, so fxgate will not take one: remove privateKey and import the public key only (${PUBLIC_KEY_HINT})`,
    );
  }
  for (const field of Object.keys(record)) {
    if (field !== 'privateKey' && !(FIELDS as readonly string[]).includes(field)) {
      // Refused rather than ignored: a misspelt ipAllowlist would otherwise open the key to any address.
      problem(field, `unknown field; a key record has ${FIELDS.join(', ')} (ipAllowlist optional)`);
    }
  }
  const name = readName(record, problem);
  const publicKeyPem = readPublicKey(record.publicKey, problem);
  const scopes = readScopes(record.scopes, problem);
  const mode = readMode(record.mode, problem);
  const ipAllowlist = readAllowlist(record.ipAllowlist, problem);
  if (
    problems.length > before ||
    name === null ||
    publicKeyPem === null ||
    scopes === null ||
    mode === null ||
    ipAllowlist === null
  )
    return null;
  return { line: raw.line, ...name, publicKeyPem, scopes, mode, ipAllowlist };
}

/**
 * Reads and checks every record of a file's text. Throws a KeyImportInvalidError naming each
 * bad record's line and field; `file` is only for the messages.
 */
export function parseKeyImport(text: string, file: string): KeyImportRecord[] {
  const problems: KeyImportProblem[] = [];
  // A byte order mark is what some editors write at the start of a file; it is not part of the JSON.
  const json = text.replace(/^\uFEFF/, '');
  const records: KeyImportRecord[] = [];
  const firstLineOf = new Map<string, number>();
  for (const raw of splitRecords(json, problems)) {
    const record = readRecord(raw, problems);
    if (record === null) continue;
    // The key id alone is unique in the registry, so a repeat under another org is caught too.
    const earlier = firstLineOf.get(record.keyId);
    if (earlier !== undefined) {
      problems.push({
        line: record.line,
        field: 'name',
        message: `the key id ${record.keyId} is also on line ${earlier}; give each key once`,
      });
      continue;
    }
    firstLineOf.set(record.keyId, record.line);
    records.push(record);
  }
  if (problems.length > 0) throw new KeyImportInvalidError(file, problems);
  return records;
}

/** Reads a file and checks every record (parseKeyImport). */
export async function readKeyImportFile(path: string): Promise<KeyImportRecord[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new KeyImportInvalidError(path, [
      {
        line: null,
        field: null,
        message: `cannot read the file (${error instanceof Error ? error.message : String(error)})`,
      },
    ]);
  }
  return parseKeyImport(text, path);
}

interface KeyRow {
  name: string;
  public_key_pem: string;
  scopes: string[];
  mode: string;
  ip_allowlist: string[];
  revoked_at: Date | null;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a.map((item) => item.toLowerCase()));
  const right = new Set(b.map((item) => item.toLowerCase()));
  return left.size === right.size && [...left].every((item) => right.has(item));
}

function sameKey(registeredPem: string, record: KeyImportRecord): boolean {
  try {
    const der = (pem: string) => createPublicKey(pem).export({ type: 'spki', format: 'der' });
    return der(registeredPem).equals(der(record.publicKeyPem));
  } catch {
    return false;
  }
}

/** How the registered key differs from the record; empty when they agree. */
function differences(row: KeyRow, record: KeyImportRecord): string[] {
  const found: string[] = [];
  if (!sameKey(row.public_key_pem, record)) found.push('another public key');
  if (!sameSet(row.scopes, record.scopes))
    found.push(`scopes ${row.scopes.join(',')} (the file: ${record.scopes.join(',')})`);
  if (row.mode !== record.mode) found.push(`mode ${row.mode} (the file: ${record.mode})`);
  if (!sameSet(row.ip_allowlist, record.ipAllowlist)) {
    const shown = (list: readonly string[]) => (list.length > 0 ? list.join(',') : 'any address');
    found.push(`IP allowlist ${shown(row.ip_allowlist)} (the file: ${shown(record.ipAllowlist)})`);
  }
  return found;
}

const NEVER_REPLACED =
  'an import never replaces a registered key; if the file is right, revoke the registered key (`fxgate keys revoke NAME`) and import the new one under a key id of its own';

/** Registers one record in the transaction: imported, unchanged, or a problem (the caller rolls back). */
async function registerOne(tx: Queryable, record: KeyImportRecord): Promise<KeyImportOutcome | KeyImportProblem> {
  await ensureOrgIn(tx, record.orgId);
  // ON CONFLICT DO NOTHING rather than a look-up first: a concurrent import of the same key then
  // waits for the other transaction and is compared with what it committed.
  const inserted = await tx.query(
    `INSERT INTO api_keys (name, id, org_id, public_key_pem, scopes, mode, ip_allowlist, label)
     VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)
     ON CONFLICT DO NOTHING
     RETURNING name`,
    [record.name, record.keyId, record.orgId, record.publicKeyPem, record.scopes, record.mode, record.ipAllowlist],
  );
  if (inserted.rowCount > 0) return 'imported';
  const { rows } = await tx.query<KeyRow>(
    'SELECT name, public_key_pem, scopes, mode, ip_allowlist, revoked_at FROM api_keys WHERE name = $1',
    [record.name],
  );
  const row = rows[0];
  const problem = (message: string): KeyImportProblem => ({ line: record.line, field: 'name', message });
  if (row === undefined) {
    const other = await tx.query<{ name: string }>('SELECT name FROM api_keys WHERE id = $1', [record.keyId]);
    return problem(
      `the key id ${record.keyId} is already registered as ${other.rows[0]?.name ?? 'another key'}; key ids are unique across orgs, so this record's name was changed or the id is not this key's`,
    );
  }
  if (row.revoked_at !== null) {
    return problem(
      `${record.name} is registered but was revoked at ${row.revoked_at.toISOString()}; an import does not bring a revoked key back: issue a new key to the integrator (\`fxgate keys create\`)`,
    );
  }
  const found = differences(row, record);
  if (found.length > 0)
    return problem(`${record.name} is already registered with ${found.join(', ')}; ${NEVER_REPLACED}`);
  return 'unchanged';
}

/**
 * Registers checked records in one transaction: each org if it is new (both books, as `keys
 * create` makes them), each key under its own name. Throws a KeyImportConflictError, with
 * nothing registered, when any name or key id is already registered otherwise.
 */
export async function registerImportedKeys(
  db: Database,
  records: readonly KeyImportRecord[],
  file: string,
): Promise<KeyImportResult[]> {
  return db.transaction(async (tx) => {
    const results: KeyImportResult[] = [];
    const conflicts: KeyImportProblem[] = [];
    // Every record is tried, so that one run reports every conflict of the file.
    for (const record of records) {
      const outcome = await registerOne(tx, record);
      if (typeof outcome === 'string') results.push({ name: record.name, outcome });
      else conflicts.push(outcome);
    }
    // Thrown inside the transaction, which rolls back what the records before registered.
    if (conflicts.length > 0) throw new KeyImportConflictError(file, conflicts);
    return results;
  });
}

/** Reads, checks and registers one file, whole or not at all. */
export async function importKeyFile(db: Database, path: string): Promise<KeyImportFileResult> {
  const records = await readKeyImportFile(path);
  return { file: path, keys: await registerImportedKeys(db, records, path) };
}
