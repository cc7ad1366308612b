/**
 * What the shadow report may keep of a value it shows as an example: account numbers, routing
 * numbers, SWIFT codes, wallet addresses and anything shaped like an IBAN keep only their last
 * four characters; anything that looks like a secret (a token, a key, a signature) is dropped
 * whole. Examples are stored in the gateway's database and read by people, so a value is masked
 * before it is kept anywhere.
 */
import { isLosslessNumber, parse, stringify } from 'lossless-json';

/** The last segment of the path names the field (`data[].accountNumber` -> accountNumber). */
const ACCOUNT_FIELDS: ReadonlySet<string> = new Set([
  'accountnumber',
  'routingnumber',
  'swiftcode',
  'address',
  'iban',
  'bic',
]);
const SECRET_FIELD = /token|secret|password|passphrase|authorization|signature|privatekey|apikey|credential/i;
/** An IBAN: country, check digits, then 11 to 30 letters and digits (spaces allowed between groups). */
const IBAN_LIKE = /^[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}$/i;
/** A JWT or a PEM block, wherever it turns up. */
const SECRET_VALUE = /^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.|-----BEGIN /;

export const REDACTED = '[redacted]';
const KEPT = 4;

function fieldOf(path: string): string {
  const last = path.split('.').at(-1) ?? path;
  return last.replace(/\[\]$/, '').toLowerCase();
}

/** Every character but the last four as `*` (all of them when there are four or fewer). */
export function keepLastFour(text: string): string {
  const characters = [...text];
  const hidden = characters.length <= KEPT ? characters.length : characters.length - KEPT;
  return '*'.repeat(hidden) + characters.slice(hidden).join('');
}

/**
 * An example value (JSON text, as the comparison writes it) masked for the field at `path`; the
 * result is JSON text too. `(absent)` and other non-JSON markers pass unchanged.
 */
export function maskExample(path: string, text: string): string {
  let value: unknown;
  try {
    value = parse(text);
  } catch {
    return text;
  }
  const field = fieldOf(path);
  if (SECRET_FIELD.test(field)) return JSON.stringify(REDACTED);
  if (typeof value === 'string') {
    if (SECRET_VALUE.test(value)) return JSON.stringify(REDACTED);
    if (ACCOUNT_FIELDS.has(field) || IBAN_LIKE.test(value)) return JSON.stringify(keepLastFour(value));
    return text;
  }
  if (isLosslessNumber(value) && ACCOUNT_FIELDS.has(field)) return JSON.stringify(keepLastFour(value.value));
  return stringify(value) ?? text;
}
