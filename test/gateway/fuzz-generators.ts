/**
 * Generators of hostile requests for the gateway fuzz (fuzz.test.ts): every legacy operation of
 * v1 and v2 (read from the operation list and the loaded mappings, so a new operation is
 * covered without an edit here), the /v3 passthrough, and paths that belong to neither.
 *
 * A generated request is plain data, so fast-check can print and shrink it. What exists only
 * when it is sent (a fresh quote, a trade to reverse, a token, a signature) is named by a Ref or
 * an auth kind and filled in by the runner; renderBody and renderPieces turn the data into bytes.
 */
import fc from 'fast-check';

import type { BodyField, EndpointMapping } from '../../src/gateway/legacy/declarations/endpoint-mappings.js';
import {
  LEGACY_GENERATIONS,
  LEGACY_OPERATIONS,
  type LegacyGeneration,
} from '../../src/gateway/legacy/declarations/legacy-operations.js';
import type { LegacyMappings } from '../../src/gateway/legacy/declarations/mappings-loader.js';

// ---------------------------------------------------------------------------------------------
// What a request is made of.

/** Values known only at send time: ids of the book the runner set up, or made for this request. */
export const REFS = [
  'orgId',
  'otherOrgId',
  'randomUuid',
  'tradeUuid',
  'tradeV3',
  'freshQuoteUuid',
  'freshQuoteV3',
  'reversalTradeUuid',
  'reversalQuoteUuid',
  'reversalTradeV3',
  'reversalQuoteV3',
  'settleableUuid',
  'settleableV3',
  'fiatAccountUuid',
  'fiatAccountV3',
  'coinAccountUuid',
  'coinAccountV3',
  'depositV3',
  'withdrawalV3',
  'freshWithdrawalV3',
  'webhookV3',
] as const;
export type Ref = (typeof REFS)[number];

/** Text (written as UTF-8), raw bytes (written as they are), or a value known at send time. */
export type Piece = string | { readonly raw: readonly number[] } | { readonly ref: Ref };

/**
 * A JSON text as a tree that can also hold what JSON.stringify would never write: repeated keys,
 * number tokens such as 1e400, raw bytes, and nesting deeper than any parser expects.
 */
export type JsonNode =
  | { readonly s: string }
  | { readonly n: string }
  | { readonly ref: Ref }
  | { readonly bytes: readonly number[] }
  | { readonly o: readonly (readonly [JsonKey, JsonNode])[] }
  | { readonly a: readonly JsonNode[] }
  | { readonly deep: number; readonly style: 'array' | 'object' | 'unclosed' };
export type JsonKey = string | { readonly bytes: readonly number[] };

/** Edits of the finished body text. */
export type TextEdit =
  | { readonly op: 'truncate'; readonly at: number }
  | { readonly op: 'bom' }
  | { readonly op: 'utf16' }
  | { readonly op: 'insert'; readonly at: number; readonly bytes: readonly number[] }
  | { readonly op: 'append'; readonly text: string };

export type OversizeStyle = 'pad-field' | 'whitespace' | 'array' | 'junk' | 'nul-bytes' | 'escaped-nul';

export type BodySpec =
  | { readonly kind: 'none' }
  | { readonly kind: 'json'; readonly node: JsonNode; readonly edits: readonly TextEdit[] }
  | { readonly kind: 'bytes'; readonly bytes: readonly number[] }
  | { readonly kind: 'oversize'; readonly size: number; readonly style: OversizeStyle; readonly base: JsonNode };

export const LEGACY_TOKEN_KINDS = [
  'valid',
  'openfx-issuer',
  'live-view-key',
  'other-org-key',
  'expired',
  'too-long-lived',
  'alg-none',
  'hs256',
  'unknown-kid',
  'truncated',
  'flipped-signature',
  'replayed',
  'no-bearer-prefix',
] as const;
export type LegacyTokenKind = (typeof LEGACY_TOKEN_KINDS)[number];

export const V3_AUTH_KINDS = [
  'signed',
  'live-view-key',
  'bad-signature',
  'no-signature',
  'signed-other-body',
  'signed-other-path',
  'legacy-token',
  'replayed',
] as const;
export type V3AuthKind = (typeof V3_AUTH_KINDS)[number];

export type AuthSpec =
  | { readonly kind: 'none' }
  | { readonly kind: 'legacy'; readonly token: LegacyTokenKind }
  /** A validly signed token whose kid and sub hold hostile text. */
  | { readonly kind: 'poison-kid'; readonly text: string }
  | { readonly kind: 'v3'; readonly variant: V3AuthKind }
  | { readonly kind: 'header'; readonly value: readonly Piece[] };

export type IdempotencySpec = 'fresh' | 'absent' | { readonly pooled: number } | { readonly value: readonly Piece[] };

export interface HeaderSpec {
  /** `match`: what the key's mode needs (SANDBOX); otherwise left out or this value. */
  readonly appMode: 'match' | 'absent' | { readonly value: readonly Piece[] };
  /** `auto`: application/json when there is a body. */
  readonly contentType: 'auto' | 'absent' | { readonly value: readonly Piece[] };
  readonly idempotencyKey: IdempotencySpec;
  readonly requestId?: readonly Piece[];
  readonly extra: readonly (readonly [string, readonly Piece[]])[];
}

export type Family = 'v1' | 'v2' | 'v3' | 'other';

export interface FuzzRequest {
  /** Which generator made it; the envelope expected is decided by the path actually sent. */
  readonly family: Family;
  /** The legacy operation, the v3 template, or the kind of stray path. */
  readonly operation: string;
  readonly method: string;
  /** The request target, concatenated. */
  readonly target: readonly Piece[];
  readonly auth: AuthSpec;
  readonly headers: HeaderSpec;
  readonly body: BodySpec;
  /** Transfer-Encoding: chunked instead of Content-Length. */
  readonly chunked: boolean;
  /** What is hostile about it, for the failure report (which feature every failing request shares). */
  readonly tags: readonly string[];
}

// ---------------------------------------------------------------------------------------------
// Hostile material.

/** Free text that PostgreSQL, header writers or UTF-8 encoders may choke on. */
export const POISON_TEXT = [
  '\u0000',
  'a\u0000b',
  '\u0000\u0000\u0000\u0000',
  '\ud800',
  '\udfff',
  'x\ud800y',
  '\udc00\ud800',
  '\ud83d',
  'ok\u0000\ud800',
  '\uffff',
  '\ufeff',
  '\u2028\u2029',
  '\u0001\u001f\u007f',
  'é\u0000é',
  '%00',
  '\\u0000',
] as const;

/** Raw byte sequences: NUL, an encoded lone surrogate (invalid UTF-8), an overlong slash, stray bytes. */
export const POISON_BYTES: readonly (readonly number[])[] = [
  [0x00],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xff],
  [0xc0, 0xaf],
  [0xc3],
  [0x01],
  [0x7f],
];

/** Number tokens a double cannot hold, and some that are not JSON at all. */
export const HOSTILE_NUMBERS = [
  '1e400',
  '-1e400',
  '1E+400',
  '9'.repeat(400),
  `-${'9'.repeat(400)}`,
  `0.${'0'.repeat(399)}1`,
  '1e-400',
  '-0',
  '-0.0',
  '0',
  '-1',
  '1.000000000000000000000000001',
  '123456789012345678901234567890.12',
  '1e2',
  '00',
  '+1',
  '.5',
  'NaN',
  'Infinity',
  '0x10',
] as const;

/** Path segments that are slashes, traversals or broken escapes in disguise. */
export const PATH_POISON = [
  '%2F',
  '%2f',
  '%5C',
  '%5c',
  '..%2F..',
  '..%2f..%2f..%2fv3%2ffx%2fpairs',
  '%2e%2e%2f',
  '..',
  '.',
  '\\',
  '..\\..',
  '%zz',
  '%',
  '%2',
  '%%',
  '%00',
  '%ED%A0%80',
  '%C0%AF',
  '%FF',
  '%u0000',
  '%252F',
  '%3B',
  ';x=1',
  '%3F',
  '%23',
  'é',
] as const;

/** Bytes written raw into a path or header (never CR or LF, which would end the line). */
export const RAW_TARGET_BYTES: readonly (readonly number[])[] = [
  [0x00],
  [0x20],
  [0x09],
  [0x7f],
  [0xff],
  [0xed, 0xa0, 0x80],
  [0x01],
];

/** A character of hostile text: mostly plain, sometimes NUL, a lone surrogate or any code point. */
const hostileChar = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...'abcXYZ019 -_.:/') },
  { weight: 1, arbitrary: fc.constant('\u0000') },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);

export const poisonText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...POISON_TEXT) },
  { weight: 2, arbitrary: fc.string({ unit: hostileChar, minLength: 1, maxLength: 24 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('inv-', 'ref ', 'Treasury '), fc.constantFrom(...POISON_TEXT))
      .map(([a, b]) => a + b),
  },
);

/** Tags naming what a piece of text carries. */
export function textTags(text: string, where: string): string[] {
  const tags: string[] = [];
  if (text.includes('\u0000')) tags.push(`${where}:nul`);
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text))
    tags.push(`${where}:lone-surrogate`);
  return tags;
}

function bytesTags(bytes: readonly number[], where: string): string[] {
  if (bytes.includes(0)) return [`${where}:raw-nul`];
  if (bytes[0] === 0xed) return [`${where}:raw-surrogate-bytes`];
  return [`${where}:raw-bytes`];
}

/** Text percent-encoded byte by byte (encodeURIComponent refuses lone surrogates). */
export function percentEncode(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

interface Tagged<T> {
  readonly value: T;
  readonly tags: readonly string[];
}

const tagged = <T>(value: T, ...tags: string[]): Tagged<T> => ({ value, tags });

// ---------------------------------------------------------------------------------------------
// Bodies.

const str = (s: string): JsonNode => ({ s });
const num = (n: string): JsonNode => ({ n });
const ref = (r: Ref): JsonNode => ({ ref: r });
const obj = (entries: Record<string, JsonNode>): JsonNode => ({ o: Object.entries(entries) });

/** A value of the wrong kind, a hostile number, hostile text (escaped or raw) or a deep nest. */
const hostileValue: fc.Arbitrary<Tagged<JsonNode>> = fc.oneof(
  { weight: 4, arbitrary: poisonText.map((text) => tagged(str(text), 'body:hostile-text', ...textTags(text, 'body'))) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(...POISON_BYTES)
      .map((bytes) => tagged<JsonNode>({ bytes: [0x22, 0x61, ...bytes, 0x62, 0x22] }, ...bytesTags(bytes, 'body'))),
  },
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_NUMBERS).map((n) => tagged(num(n), 'body:hostile-number')) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom<JsonNode>(num('true'), num('null'), { a: [] }, { o: [] }, str(''), str('1'), str(' 10 '))
      .map((node) => tagged(node, 'body:wrong-type')),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({
        deep: fc.integer({ min: 50, max: 5000 }),
        style: fc.constantFrom('array' as const, 'object' as const, 'unclosed' as const),
      })
      .map((node) => tagged<JsonNode>(node, 'body:deep-nesting')),
  },
);

/** Any JSON value, its strings hostile. */
const randomJson: fc.Arbitrary<JsonNode> = fc.letrec<{ node: JsonNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    poisonText.map(str),
    fc.constantFrom(...HOSTILE_NUMBERS).map(num),
    fc.constantFrom(num('true'), num('false'), num('null')),
    fc.array(tie('node'), { maxLength: 4 }).map((a): JsonNode => ({ a })),
    fc
      .array(
        fc.tuple(fc.oneof(poisonText, fc.constantFrom('amount', 'quoteId', '__proto__', 'constructor')), tie('node')),
        { maxLength: 4 },
      )
      .map((o): JsonNode => ({ o })),
  ),
})).node;

type Entries = readonly (readonly [JsonKey, JsonNode])[];

/** One change to a valid body's fields. */
function fieldMutation(fields: readonly string[]): fc.Arbitrary<Tagged<(entries: Entries) => Entries>> {
  const field = fields.length > 0 ? fc.constantFrom(...fields) : fc.constantFrom('amount');
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(field, hostileValue)
        .map(([name, value]) =>
          tagged(
            (entries: Entries) => entries.map(([k, v]) => [k, k === name ? value.value : v] as const),
            ...value.tags,
          ),
        ),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(field, hostileValue, fc.boolean())
        .map(([name, value, first]) =>
          tagged(
            (entries: Entries) =>
              first ? [[name, value.value] as const, ...entries] : [...entries, [name, value.value] as const],
            'body:duplicate-key',
            ...value.tags,
          ),
        ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.oneof(poisonText, fc.constantFrom('__proto__', 'constructor', 'prototype')), hostileValue)
        .map(([name, value]) =>
          tagged(
            (entries: Entries) => [...entries, [name, value.value] as const],
            'body:extra-field',
            ...textTags(name, 'body-key'),
            ...value.tags,
          ),
        ),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...POISON_BYTES)
        .map((bytes) =>
          tagged(
            (entries: Entries) => [...entries, [{ bytes: [0x6b, ...bytes] }, num('1')] as const],
            'body:raw-key',
            ...bytesTags(bytes, 'body'),
          ),
        ),
    },
    {
      weight: 1,
      arbitrary: field.map((name) =>
        tagged((entries: Entries) => entries.filter(([k]) => k !== name), 'body:missing-field'),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constant(
        tagged(
          (entries: Entries) => [['__proto__', { o: [['isAdmin', num('true')]] }] as const, ...entries],
          'body:proto-key',
        ),
      ),
    },
  );
}

const textEdit: fc.Arbitrary<Tagged<TextEdit>> = fc.oneof(
  fc.double({ min: 0, max: 1, noNaN: true }).map((at) => tagged<TextEdit>({ op: 'truncate', at }, 'body:truncated')),
  fc.constant(tagged<TextEdit>({ op: 'bom' }, 'body:bom')),
  fc.constant(tagged<TextEdit>({ op: 'utf16' }, 'body:utf16')),
  fc
    .tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(...POISON_BYTES))
    .map(([at, bytes]) => tagged<TextEdit>({ op: 'insert', at, bytes }, ...bytesTags(bytes, 'body'))),
  fc
    .constantFrom('}', ',', ' garbage', '{}', '\u0000')
    .map((text) => tagged<TextEdit>({ op: 'append', text }, 'body:trailing-garbage', ...textTags(text, 'body'))),
);

/** How many strings (values and keys) a tree holds. */
function textSlots(node: JsonNode): number {
  if ('s' in node || 'ref' in node) return 1;
  if ('a' in node) return node.a.reduce((n, item) => n + textSlots(item), 0);
  if ('o' in node) return node.o.reduce((n, [, value]) => n + 1 + textSlots(value), 0);
  return 0;
}

/** The tree with its `target`-th string (value or key, depth first) replaced. */
function replaceText(node: JsonNode, target: number, value: JsonNode, key: JsonKey): JsonNode {
  let slot = 0;
  const walk = (n: JsonNode): JsonNode => {
    if ('s' in n || 'ref' in n) return slot++ === target ? value : n;
    if ('a' in n) return { a: n.a.map(walk) };
    if ('o' in n) return { o: n.o.map(([k, v]) => [slot++ === target ? key : k, walk(v)] as const) };
    return n;
  };
  return walk(node);
}

/** Hostile text as a JSON string (escaped: `\u0000`, `\ud800`) or as raw bytes inside the quotes. */
const hostileString: fc.Arbitrary<Tagged<{ value: JsonNode; key: JsonKey }>> = fc.oneof(
  { weight: 3, arbitrary: poisonText.map((t) => tagged({ value: str(t), key: t }, ...textTags(t, 'body'))) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(...POISON_BYTES)
      .map((b) =>
        tagged(
          { value: { bytes: [0x22, 0x61, ...b, 0x22] } as JsonNode, key: { bytes: [0x61, ...b] } as JsonKey },
          ...bytesTags(b, 'body'),
        ),
      ),
  },
);

const oversizeSize = fc.oneof(
  { weight: 24, arbitrary: fc.integer({ min: 9_000, max: 64_000 }) },
  { weight: 4, arbitrary: fc.integer({ min: 64_001, max: 1_000_000 }) },
  { weight: 4, arbitrary: fc.integer({ min: 1_000_001, max: 4_000_000 }) },
);

/**
 * A body for an operation whose valid body is `valid`: the valid one, a mutated one, random
 * JSON, random bytes, an oversize one, or none.
 */
function bodies(
  valid: fc.Arbitrary<Record<string, JsonNode>> | null,
  write: boolean,
  hostileOnly = false,
): fc.Arbitrary<Tagged<BodySpec>> {
  const base = valid ?? fc.constant<Record<string, JsonNode>>({});
  const w = (writeWeight: number, readWeight: number) => (write ? writeWeight : readWeight);
  return fc.oneof(
    {
      weight: hostileOnly && !write ? 0 : w(1, 40),
      arbitrary: fc.constant(tagged<BodySpec>({ kind: 'none' }, write ? 'body:missing' : 'body:none')),
    },
    {
      weight: hostileOnly ? 0 : w(12, 1),
      arbitrary: base.map((fields) =>
        tagged<BodySpec>({ kind: 'json', node: obj(fields), edits: [] }, write ? 'body:valid' : 'body:on-a-read'),
      ),
    },
    {
      // One string of a valid body, any value or key at any depth, made hostile: the rest stays valid.
      weight: w(12, 1),
      arbitrary: fc.tuple(base, fc.nat(), hostileString).map(([fields, n, text]) => {
        const node = obj(fields);
        const slots = textSlots(node);
        const hostile =
          slots === 0
            ? obj({ text: text.value.value })
            : replaceText(node, n % slots, text.value.value, text.value.key);
        return tagged<BodySpec>({ kind: 'json', node: hostile, edits: [] }, 'body:one-hostile-string', ...text.tags);
      }),
    },
    {
      weight: w(6, 1),
      arbitrary: base.chain((fields) =>
        fc
          .tuple(
            fc.array(fieldMutation(Object.keys(fields)), { minLength: 1, maxLength: 3 }),
            fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: textEdit }),
          )
          .map(([mutations, edit]) => {
            const entries = mutations.reduce<Entries>((acc, m) => m.value(acc), Object.entries(fields));
            return tagged<BodySpec>(
              { kind: 'json', node: { o: entries }, edits: edit ? [edit.value] : [] },
              'body:mutated',
              ...mutations.flatMap((m) => m.tags),
              ...(edit?.tags ?? []),
            );
          }),
      ),
    },
    {
      weight: w(1, 1),
      arbitrary: randomJson.map((node) => tagged<BodySpec>({ kind: 'json', node, edits: [] }, 'body:random-json')),
    },
    {
      weight: w(1, 1),
      arbitrary: fc
        .uint8Array({ minLength: 1, maxLength: 300 })
        .map((bytes) =>
          tagged<BodySpec>(
            { kind: 'bytes', bytes: [...bytes] },
            'body:random-bytes',
            ...(bytes.includes(0) ? ['body:raw-nul'] : []),
          ),
        ),
    },
    {
      weight: w(2, 1),
      arbitrary: fc
        .record({
          size: oversizeSize,
          style: fc.constantFrom<OversizeStyle>('pad-field', 'whitespace', 'array', 'junk', 'nul-bytes', 'escaped-nul'),
          base,
        })
        .map(({ size, style, base: fields }) =>
          tagged<BodySpec>(
            { kind: 'oversize', size, style, base: obj(fields) },
            'body:oversize',
            size > 1_000_000 ? 'body:multi-mb' : 'body:oversize-kb',
          ),
        ),
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Headers and auth.

const headerText = (values: readonly string[]): fc.Arbitrary<Tagged<readonly Piece[]>> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...values).map((v) => tagged<readonly Piece[]>([v])) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...RAW_TARGET_BYTES.filter((b) => b[0] !== 0x20))
        .map((raw) => tagged<readonly Piece[]>(['x', { raw }, 'y'], ...bytesTags(raw, 'header'))),
    },
  );

const appModeHostile = fc.oneof(
  fc.constant(tagged<HeaderSpec['appMode']>('absent', 'header:no-app-mode')),
  headerText(['LIVE', 'sandbox', 'production', 'nonsense', '', 'SANDBOX, LIVE']).map((t) =>
    tagged<HeaderSpec['appMode']>({ value: t.value }, 'header:odd-app-mode', ...t.tags),
  ),
);

const contentTypeHostile = fc.oneof(
  { weight: 1, arbitrary: fc.constant(tagged<HeaderSpec['contentType']>('absent', 'header:no-content-type')) },
  {
    weight: 3,
    arbitrary: headerText([
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=utf-16',
      'APPLICATION/JSON',
      'application/jsonp',
      'application/json, text/plain',
      'application/vnd.api+json',
      '',
      '*/*',
    ]).map((t) => tagged<HeaderSpec['contentType']>({ value: t.value }, 'header:wrong-content-type', ...t.tags)),
  },
);

function idempotencyHostile(write: boolean): fc.Arbitrary<Tagged<IdempotencySpec>> {
  return fc.oneof(
    write
      ? fc.constant(tagged<IdempotencySpec>('absent', 'header:no-idempotency-key'))
      : fc.constant(tagged<IdempotencySpec>('fresh', 'header:idempotency-key-on-a-read')),
    fc.integer({ min: 0, max: 2 }).map((n) => tagged<IdempotencySpec>({ pooled: n }, 'header:reused-idempotency-key')),
    fc
      .oneof(
        headerText(['has space', 'k'.repeat(256), '', 'ключ', '%00', 'a/b']),
        poisonText.map((t) => tagged<readonly Piece[]>([percentEncode(t)])),
      )
      .map((t) => tagged<IdempotencySpec>({ value: t.value }, 'header:bad-idempotency-key', ...t.tags)),
  );
}

const requestIdHostile = headerText(['req-1', 'x'.repeat(200), 'a b', '../..', '%00']).map((t) =>
  tagged<readonly Piece[] | undefined>(t.value, 'header:odd-request-id', ...t.tags),
);

const extraHostile = fc.oneof(
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 17_000, max: 40_000 })
      .map((n) => tagged<HeaderSpec['extra']>([['x-padding', ['p'.repeat(n)]]], 'header:oversize')),
  },
  {
    weight: 2,
    arbitrary: headerText(['00-zz-zz-01', '00-' + '0'.repeat(32) + '-' + '0'.repeat(16) + '-01']).map((t) =>
      tagged<HeaderSpec['extra']>([['traceparent', t.value]], 'header:odd-traceparent', ...t.tags),
    ),
  },
);

interface HeaderParts {
  readonly appMode: Tagged<HeaderSpec['appMode']>;
  readonly contentType: Tagged<HeaderSpec['contentType']>;
  readonly idempotencyKey: Tagged<IdempotencySpec>;
  readonly requestId: Tagged<readonly Piece[] | undefined>;
  readonly extra: Tagged<HeaderSpec['extra']>;
}

function cleanHeaderParts(write: boolean): HeaderParts {
  return {
    appMode: tagged('match'),
    contentType: tagged('auto'),
    idempotencyKey: tagged(write ? 'fresh' : 'absent'),
    requestId: tagged(undefined),
    extra: tagged([]),
  };
}

function toHeaders(parts: HeaderParts): Tagged<HeaderSpec> {
  return tagged<HeaderSpec>(
    {
      appMode: parts.appMode.value,
      contentType: parts.contentType.value,
      idempotencyKey: parts.idempotencyKey.value,
      requestId: parts.requestId.value,
      extra: parts.extra.value,
    },
    ...parts.appMode.tags,
    ...parts.contentType.tags,
    ...parts.idempotencyKey.tags,
    ...parts.requestId.tags,
    ...parts.extra.tags,
  );
}

/** Each header hostile now and then, independently. */
function headerSpecs(write: boolean): fc.Arbitrary<Tagged<HeaderSpec>> {
  const clean = cleanHeaderParts(write);
  const sometimes = <T>(cleanValue: Tagged<T>, hostile: fc.Arbitrary<Tagged<T>>, odds: number) =>
    fc.oneof({ weight: odds, arbitrary: fc.constant(cleanValue) }, { weight: 1, arbitrary: hostile });
  return fc
    .record({
      appMode: sometimes(clean.appMode, appModeHostile, 15),
      contentType: sometimes(clean.contentType, contentTypeHostile, 8),
      idempotencyKey: sometimes(clean.idempotencyKey, idempotencyHostile(write), 8),
      requestId: sometimes(clean.requestId, requestIdHostile, 12),
      extra: sometimes(clean.extra, extraHostile, 30),
    })
    .map(toHeaders);
}

/** Exactly one header hostile. */
function headerFault(write: boolean): fc.Arbitrary<Tagged<HeaderSpec>> {
  const clean = cleanHeaderParts(write);
  return fc
    .oneof(
      appModeHostile.map((appMode) => ({ ...clean, appMode })),
      contentTypeHostile.map((contentType) => ({ ...clean, contentType })),
      idempotencyHostile(write).map((idempotencyKey) => ({ ...clean, idempotencyKey })),
      requestIdHostile.map((requestId) => ({ ...clean, requestId })),
      extraHostile.map((extra) => ({ ...clean, extra })),
    )
    .map(toHeaders);
}

const garbageAuthorization: fc.Arbitrary<Tagged<AuthSpec>> = fc.oneof(
  poisonText.map((t) => tagged<AuthSpec>({ kind: 'header', value: [`Bearer ${percentEncode(t)}`] }, 'auth:garbage')),
  fc
    .constantFrom('Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Bearer a.b.c', 'Bearer ..', `Bearer ${'A'.repeat(5000)}`)
    .map((v) => tagged<AuthSpec>({ kind: 'header', value: [v] }, 'auth:garbage')),
  fc
    .constantFrom(...RAW_TARGET_BYTES.filter((b) => b[0] !== 0x20))
    .map((raw) =>
      tagged<AuthSpec>(
        { kind: 'header', value: ['Bearer x', { raw }, 'y'] },
        'auth:garbage',
        ...bytesTags(raw, 'header'),
      ),
    ),
);

const legacyAuthHostile: fc.Arbitrary<Tagged<AuthSpec>> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc
      .constantFrom(...LEGACY_TOKEN_KINDS.filter((k) => k !== 'valid'))
      .map((token) => tagged<AuthSpec>({ kind: 'legacy', token }, `auth:${token}`)),
  },
  {
    weight: 3,
    arbitrary: poisonText.map((text) =>
      tagged<AuthSpec>({ kind: 'poison-kid', text }, 'auth:poison-kid', ...textTags(text, 'kid')),
    ),
  },
  { weight: 1, arbitrary: fc.constant(tagged<AuthSpec>({ kind: 'none' }, 'auth:none')) },
  { weight: 2, arbitrary: garbageAuthorization },
);
const LEGACY_AUTH_CLEAN = tagged<AuthSpec>({ kind: 'legacy', token: 'valid' });
const legacyAuth = fc.oneof(
  { weight: 3, arbitrary: fc.constant(LEGACY_AUTH_CLEAN) },
  { weight: 1, arbitrary: legacyAuthHostile },
);

const v3AuthHostile: fc.Arbitrary<Tagged<AuthSpec>> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .constantFrom(...V3_AUTH_KINDS.filter((k) => k !== 'signed'))
      .map((variant) => tagged<AuthSpec>({ kind: 'v3', variant }, `auth:${variant}`)),
  },
  {
    weight: 3,
    arbitrary: poisonText.map((text) =>
      tagged<AuthSpec>({ kind: 'poison-kid', text }, 'auth:poison-kid', ...textTags(text, 'kid')),
    ),
  },
  { weight: 3, arbitrary: fc.constant(tagged<AuthSpec>({ kind: 'none' }, 'auth:none')) },
  { weight: 2, arbitrary: garbageAuthorization },
);
const V3_AUTH_CLEAN = tagged<AuthSpec>({ kind: 'v3', variant: 'signed' });
const v3Auth = fc.oneof({ weight: 3, arbitrary: fc.constant(V3_AUTH_CLEAN) }, { weight: 1, arbitrary: v3AuthHostile });

// ---------------------------------------------------------------------------------------------
// Paths.

type Segment = readonly Piece[];

/** A segment replaced by, or carrying, something a router or URL parser may read differently. */
const hostileSegment: fc.Arbitrary<Tagged<Segment>> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .constantFrom(...PATH_POISON)
      .map((p) =>
        tagged<Segment>(
          [p],
          `path:${p.includes('%') && !/%[0-9A-Fa-f]{2}/.test(p) ? 'bad-escape' : p.includes('..') ? 'traversal' : /%2f|%5c|\\/i.test(p) ? 'encoded-slash' : 'odd'}`,
        ),
      ),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(...RAW_TARGET_BYTES)
      .map((raw) => tagged<Segment>(['a', { raw }, 'b'], ...bytesTags(raw, 'path'))),
  },
  {
    weight: 2,
    arbitrary: poisonText.map((t) =>
      tagged<Segment>([percentEncode(t)], 'path:encoded-hostile-text', ...textTags(t, 'path')),
    ),
  },
);

type PathEdit = (segments: readonly Segment[]) => readonly Segment[];

/** Edits that keep the first segment (`v1`, `v2`, `v3`), so the path stays in its generation. */
const pathEdit: fc.Arbitrary<Tagged<PathEdit>> = fc.oneof(
  fc
    .tuple(fc.nat(), hostileSegment)
    .map(([i, seg]) =>
      tagged<PathEdit>(
        (s) => s.map((x, j) => (j > 0 && j === 1 + (i % Math.max(1, s.length - 1)) ? seg.value : x)),
        ...seg.tags,
      ),
    ),
  fc
    .tuple(fc.nat(), hostileSegment)
    .map(([i, seg]) =>
      tagged<PathEdit>(
        (s) => s.map((x, j) => (j > 0 && j === 1 + (i % Math.max(1, s.length - 1)) ? [...x, ...seg.value] : x)),
        ...seg.tags,
      ),
    ),
  fc
    .tuple(fc.nat(), hostileSegment)
    .map(([i, seg]) =>
      tagged<PathEdit>(
        (s) => [...s.slice(0, 1 + (i % s.length)), seg.value, ...s.slice(1 + (i % s.length))],
        ...seg.tags,
      ),
    ),
  fc.constant(tagged<PathEdit>((s) => [...s, []], 'path:trailing-slash')),
  fc
    .nat()
    .map((i) =>
      tagged<PathEdit>(
        (s) => [...s.slice(0, 1 + (i % s.length)), [], ...s.slice(1 + (i % s.length))],
        'path:double-slash',
      ),
    ),
);

function joinTarget(segments: readonly Segment[], query: readonly Piece[] | null): Piece[] {
  const out: Piece[] = [];
  for (const segment of segments) out.push('/', ...segment);
  if (query !== null) out.push('?', ...query);
  return out;
}

const QUERY_VALUES = [
  '1',
  '2',
  '0',
  '-1',
  '51',
  '50',
  '100',
  '101',
  '1e400',
  '9'.repeat(400),
  '-0',
  '1.5',
  'abc',
  'true',
  'FALSE',
  'maybe',
  'USD',
  'eur',
  'Verified',
  'Pending',
  'ACTIVE',
  'Ethereum',
  '',
];

/** A query over the names an operation takes (and one it does not), with hostile values now and then. */
function queries(names: readonly string[]): fc.Arbitrary<Tagged<readonly Piece[] | null>> {
  const name = fc.oneof(
    { weight: 6, arbitrary: names.length > 0 ? fc.constantFrom(...names) : fc.constant('page') },
    { weight: 1, arbitrary: fc.constantFrom('unknown', 'page[]', '__proto__', '') },
  );
  const value: fc.Arbitrary<Tagged<readonly Piece[]>> = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...QUERY_VALUES).map((v) => tagged<readonly Piece[]>([v])) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...PATH_POISON).map((p) => tagged<readonly Piece[]>([p], 'query:hostile-escape')),
    },
    {
      weight: 1,
      arbitrary: poisonText.map((t) =>
        tagged<readonly Piece[]>([percentEncode(t)], 'query:encoded-hostile-text', ...textTags(t, 'query')),
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...RAW_TARGET_BYTES)
        .map((raw) => tagged<readonly Piece[]>(['a', { raw }], ...bytesTags(raw, 'query'))),
    },
  );
  const pair = fc.tuple(name, value).map(([n, v]) => tagged<readonly Piece[]>([n, '=', ...v.value], ...v.tags));
  return fc.oneof(
    { weight: 5, arbitrary: fc.constant(tagged<readonly Piece[] | null>(null)) },
    {
      weight: 3,
      arbitrary: fc.array(pair, { minLength: 1, maxLength: 4 }).map((pairs) =>
        tagged<readonly Piece[] | null>(
          pairs.flatMap((p, i) => (i === 0 ? p.value : ['&', ...p.value])),
          ...pairs.flatMap((p) => p.tags),
        ),
      ),
    },
  );
}

// ---------------------------------------------------------------------------------------------
// v1 and v2: every operation of the mappings.

const QUOTE_PAIRS = [
  ['EUR', 'USD'],
  ['USD', 'EUR'],
  ['GBP', 'USD'],
  ['USDC', 'USD'],
  ['EUR', 'GBP'],
] as const;
const small = fc.constantFrom('1', '2.5', '10', '25.50', '100');

/**
 * Valid field values for the operations that need more than their field types say (a quote's
 * two sides, an id that must name something of the book); the fields of any other operation,
 * and of any operation added later, come from their declared types.
 */
const LEGACY_VALID_FIELDS: Record<string, fc.Arbitrary<Record<string, JsonNode>>> = {
  generate_quote: fc
    .tuple(fc.constantFrom(...QUOTE_PAIRS), fc.boolean(), small, fc.constantFrom(3, 15, 30, 45, 60))
    .map(([[buy, sell], onBuy, amount, seconds]) => ({
      amount: num(amount),
      buy: str(buy),
      sell: str(sell),
      referencedUnit: str(onBuy ? buy : sell),
      quoteForSeconds: num(String(seconds)),
    })),
  trade: fc.constant({ quoteId: ref('freshQuoteUuid'), clientReferenceId: str('inv-7') }),
  withdrawal: small.map((amount) => ({
    amount: num(amount),
    currency: str('USDC'),
    withdrawalAddressId: ref('coinAccountUuid'),
  })),
  fiat_withdrawal: small.map((amount) => ({
    amount: num(amount),
    currency: str('USD'),
    withdrawalAddressId: ref('fiatAccountUuid'),
  })),
  'trade/reverse-quote': fc.constant({ tradeId: ref('tradeUuid') }),
  'trade/reverse': fc.constant({
    tradeId: ref('reversalTradeUuid'),
    quoteId: ref('reversalQuoteUuid'),
    clientReferenceId: str('rev-1'),
  }),
  'trade/settle': fc.constant({ tradeId: ref('settleableUuid') }),
};

function genericField(field: BodyField): JsonNode {
  switch (field.type) {
    case 'amount':
      return num('10');
    case 'currency':
      return str('USD');
    case 'integer':
      return num(String(field.oneOf?.[0] ?? 1));
    case 'string':
      return str('ref-1');
    case 'id':
      return ref(
        field.idKind === 'quote'
          ? 'freshQuoteUuid'
          : field.idKind === 'trade'
            ? 'tradeUuid'
            : field.idKind === 'withdrawalAccount'
              ? 'fiatAccountUuid'
              : 'randomUuid',
      );
  }
}

/** A valid legacy body: the declared fields, required ones always, optional ones now and then. */
function legacyValidBody(
  operation: string,
  mapping: EndpointMapping,
  allFields = false,
): fc.Arbitrary<Record<string, JsonNode>> | null {
  if (mapping.request === null) return null;
  const fields = Object.entries(mapping.request.fields);
  const known = LEGACY_VALID_FIELDS[operation] ?? fc.constant<Record<string, JsonNode>>({});
  return fc
    .tuple(known, fc.array(fc.boolean(), { minLength: fields.length, maxLength: fields.length }))
    .map(([values, keepOptional]) => {
      const body: Record<string, JsonNode> = {};
      fields.forEach(([name, field], i) => {
        if (field.required || keepOptional[i] || allFields) body[name] = values[name] ?? genericField(field);
      });
      return body;
    });
}

function legacyQueryNames(mapping: EndpointMapping): string[] {
  return [...(mapping.pagination === 'page-limit' ? ['page', 'limit'] : []), ...Object.keys(mapping.filters)];
}

/** The segments of an operation's path below the org, its `{param}`s filled with an id of the book or `id`. */
function operationSegments(operation: string, id: fc.Arbitrary<Tagged<Segment>>): fc.Arbitrary<Tagged<Segment[]>> {
  const parts = operation.split('/');
  return fc
    .tuple(...parts.map((part) => (/^\{[A-Za-z]+\}$/.test(part) ? id : fc.constant(tagged<Segment>([part])))))
    .map((segments) =>
      tagged(
        segments.map((s) => s.value),
        ...segments.flatMap((s) => s.tags),
      ),
    );
}

const OTHER_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'];
const BROKEN_METHODS = ['FOO', 'get', 'P0ST'];

function methodHostile(own: string): fc.Arbitrary<Tagged<string>> {
  return fc.oneof(
    {
      weight: 2,
      arbitrary: fc.constantFrom(...OTHER_METHODS.filter((m) => m !== own)).map((m) => tagged(m, 'method:other')),
    },
    { weight: 1, arbitrary: fc.constantFrom(...BROKEN_METHODS).map((m) => tagged(m, 'method:not-http')) },
  );
}

const orgHostile: fc.Arbitrary<Tagged<Segment>> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(tagged<Segment>([{ ref: 'otherOrgId' }], 'path:other-org')) },
  { weight: 2, arbitrary: fc.constant(tagged<Segment>([{ ref: 'randomUuid' }], 'path:unknown-org')) },
  { weight: 1, arbitrary: hostileSegment },
);
const idHostile: fc.Arbitrary<Tagged<Segment>> = fc.oneof(
  fc.constant(tagged<Segment>([{ ref: 'randomUuid' }], 'path:unknown-id')),
  hostileSegment,
);
const cleanSegment = (piece: Piece): fc.Arbitrary<Tagged<Segment>> => fc.constant(tagged<Segment>([piece]));

/** Each part of a request: what a well-behaved client sends, anything, and only hostile values. */
interface PartSource<T> {
  readonly clean: fc.Arbitrary<Tagged<T>>;
  readonly any: fc.Arbitrary<Tagged<T>>;
  /** Absent: this part is never the one fault of a request. */
  readonly hostile?: fc.Arbitrary<Tagged<T>>;
  /** How often this part is the one fault, against the others. */
  readonly faultWeight?: number;
}

interface Parts {
  readonly method: string;
  readonly segments: readonly Segment[];
  readonly edits: readonly Tagged<PathEdit>[];
  readonly query: readonly Piece[] | null;
  readonly auth: AuthSpec;
  readonly headers: HeaderSpec;
  readonly body: BodySpec;
  readonly chunked: boolean;
}

type Sources = { readonly [K in keyof Parts]: PartSource<Parts[K]> };
type Drawn = { readonly [K in keyof Parts]: Tagged<Parts[K]> };

/**
 * Requests of one operation in three modes: all clean (it should succeed), clean but for exactly
 * one hostile part (so each fault is met on its own, past every check before it), and every part
 * drawn at random.
 */
function assemble(
  family: Family,
  operation: string,
  sources: Sources,
  extraTags: readonly string[],
): fc.Arbitrary<FuzzRequest> {
  const names = Object.keys(sources) as (keyof Parts)[];
  const pick = (choose: (name: keyof Parts) => fc.Arbitrary<Tagged<unknown>>) =>
    fc.record(Object.fromEntries(names.map((n) => [n, choose(n)]))) as unknown as fc.Arbitrary<Drawn>;
  const clean = pick((n) => sources[n].clean);
  const faults = names
    .filter((n) => sources[n].hostile !== undefined)
    .map((faulty) => ({
      weight: sources[faulty].faultWeight ?? 1,
      arbitrary: pick((n) => (n === faulty ? sources[n].hostile! : sources[n].clean)),
    }));
  const drawn = fc.oneof(
    { weight: 1, arbitrary: clean.map((d) => [d, 'mode:clean'] as const) },
    { weight: 4, arbitrary: fc.oneof(...faults).map((d) => [d, 'mode:one-fault'] as const) },
    { weight: 2, arbitrary: pick((n) => sources[n].any).map((d) => [d, 'mode:random'] as const) },
  );
  return drawn.map(([d, mode]): FuzzRequest => {
    let segments = d.segments.value;
    for (const edit of d.edits.value) segments = edit.value(segments);
    const chunked = d.chunked.value && d.body.value.kind !== 'none';
    return {
      family,
      operation,
      method: d.method.value,
      target: joinTarget(segments, d.query.value),
      auth: d.auth.value,
      headers: d.headers.value,
      body: d.body.value,
      chunked,
      tags: [
        mode,
        ...extraTags,
        ...d.method.tags,
        ...d.segments.tags,
        ...d.edits.value.flatMap((e) => e.tags),
        ...d.query.tags,
        ...d.auth.tags,
        ...d.headers.tags,
        ...d.body.tags,
        ...(chunked ? ['body:chunked'] : []),
      ],
    };
  });
}

const noEdits = fc.constant(tagged<readonly Tagged<PathEdit>[]>([]));
const edits: PartSource<readonly Tagged<PathEdit>[]> = {
  clean: noEdits,
  any: fc.oneof(
    { weight: 4, arbitrary: noEdits },
    { weight: 1, arbitrary: fc.array(pathEdit, { minLength: 1, maxLength: 2 }).map((e) => tagged(e)) },
  ),
  hostile: pathEdit.map((e) => tagged([e])),
  faultWeight: 2,
};
const chunking: PartSource<boolean> = {
  clean: fc.constant(tagged(false)),
  any: fc.integer({ min: 0, max: 14 }).map((n) => tagged(n === 0)),
  hostile: fc.constant(tagged(true)),
};

function commonSources(
  own: string,
  write: boolean,
  queryNames: readonly string[],
  valid: fc.Arbitrary<Record<string, JsonNode>> | null,
) {
  const query = queries(queryNames);
  return {
    method: {
      clean: fc.constant(tagged(own)),
      any: fc.oneof({ weight: 9, arbitrary: fc.constant(tagged(own)) }, { weight: 1, arbitrary: methodHostile(own) }),
      hostile: methodHostile(own),
    },
    edits,
    query: {
      clean: fc.constant(tagged<readonly Piece[] | null>(null)),
      any: query,
      hostile: query.filter((q) => q.value !== null),
      faultWeight: 2,
    },
    headers: {
      clean: fc.constant(toHeaders(cleanHeaderParts(write))),
      any: headerSpecs(write),
      hostile: headerFault(write),
      faultWeight: 3,
    },
    body: {
      clean: write
        ? bodies(valid, write).filter((b) => b.tags.includes('body:valid'))
        : fc.constant(tagged<BodySpec>({ kind: 'none' })),
      any: bodies(valid, write),
      hostile: bodies(valid, write, true),
      faultWeight: write ? 8 : 1,
    },
    chunked: chunking,
  } satisfies Partial<Sources>;
}

function legacyRequests(mappings: LegacyMappings, generation: LegacyGeneration): fc.Arbitrary<FuzzRequest> {
  const own = LEGACY_OPERATIONS[generation] as readonly string[];
  // Operations of the other generation only (v2's reversal on v1): the generation's not-found.
  const foreign = LEGACY_GENERATIONS.flatMap((g) =>
    (LEGACY_OPERATIONS[g] as readonly string[]).filter((op) => !own.includes(op)).map((op) => [g, op] as const),
  );
  const mappingOf = (g: LegacyGeneration, op: string) =>
    (mappings.endpoints[g] as Record<string, EndpointMapping>)[op]!;
  const operation = fc.oneof(
    {
      weight: 30,
      arbitrary: fc.constantFrom(...own).map((op) => ({ op, mapping: mappingOf(generation, op), foreign: false })),
    },
    ...(foreign.length > 0
      ? [
          {
            weight: 1,
            arbitrary: fc.constantFrom(...foreign).map(([g, op]) => ({ op, mapping: mappingOf(g, op), foreign: true })),
          },
        ]
      : []),
  );
  return operation.chain(({ op, mapping, foreign: isForeign }) => {
    const write = mapping.method === 'POST';
    const prefix = (org: fc.Arbitrary<Tagged<Segment>>, id: fc.Arbitrary<Tagged<Segment>>) =>
      fc
        .tuple(org, operationSegments(op, id))
        .map(([o, below]) =>
          tagged<readonly Segment[]>([[generation], ['brokerage'], o.value, ...below.value], ...o.tags, ...below.tags),
        );
    const cleanOrg = cleanSegment({ ref: 'orgId' });
    const cleanId = cleanSegment({ ref: 'tradeUuid' });
    const sources: Sources = {
      ...commonSources(mapping.method, write, legacyQueryNames(mapping), legacyValidBody(op, mapping)),
      segments: {
        clean: prefix(cleanOrg, cleanId),
        any: prefix(
          fc.oneof({ weight: 10, arbitrary: cleanOrg }, { weight: 1, arbitrary: orgHostile }),
          fc.oneof({ weight: 3, arbitrary: cleanId }, { weight: 1, arbitrary: idHostile }),
        ),
        hostile: op.includes('{')
          ? fc.oneof(prefix(orgHostile, cleanId), prefix(cleanOrg, idHostile))
          : prefix(orgHostile, cleanId),
      },
      auth: { clean: fc.constant(LEGACY_AUTH_CLEAN), any: legacyAuth, hostile: legacyAuthHostile, faultWeight: 2 },
    };
    return assemble(generation, op, sources, isForeign ? ['op:other-generation'] : []);
  });
}

// ---------------------------------------------------------------------------------------------
// /v3 through the gateway.

export interface V3Template {
  readonly name: string;
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** Segments after `/v3/fx`. */
  readonly segments: readonly Segment[];
  readonly query?: readonly string[];
  readonly body?: fc.Arbitrary<Record<string, JsonNode>>;
}

export const V3_TEMPLATES: readonly V3Template[] = [
  { name: 'GET pairs', method: 'GET', segments: [['pairs']] },
  { name: 'GET balances', method: 'GET', segments: [['balances']] },
  { name: 'GET exposure', method: 'GET', segments: [['exposure']] },
  {
    name: 'GET trades',
    method: 'GET',
    segments: [['trades']],
    query: ['limit', 'startingAfter', 'endingBefore', 'status', 'currency'],
  },
  { name: 'GET trade', method: 'GET', segments: [['trades'], [{ ref: 'tradeV3' }]] },
  { name: 'GET deposits', method: 'GET', segments: [['deposits']], query: ['limit', 'currency', 'status'] },
  { name: 'GET deposit', method: 'GET', segments: [['deposits'], [{ ref: 'depositV3' }]] },
  { name: 'GET withdrawals', method: 'GET', segments: [['withdrawals']], query: ['limit', 'currency', 'status'] },
  { name: 'GET withdrawal', method: 'GET', segments: [['withdrawals'], [{ ref: 'withdrawalV3' }]] },
  {
    name: 'GET withdrawal-accounts',
    method: 'GET',
    segments: [['withdrawal-accounts']],
    query: ['assetType', 'network', 'currency', 'status', 'verified'],
  },
  { name: 'GET withdrawal-account', method: 'GET', segments: [['withdrawal-accounts'], [{ ref: 'fiatAccountV3' }]] },
  { name: 'GET webhook-endpoints', method: 'GET', segments: [['webhook-endpoints']] },
  {
    name: 'POST quotes',
    method: 'POST',
    segments: [['quotes']],
    body: fc
      .tuple(fc.constantFrom(...QUOTE_PAIRS), fc.boolean(), fc.constantFrom('1.00', '10.00', '99.99'))
      .map(([[buy, sell], onBuy, amount]) => ({
        buyCurrency: str(buy),
        sellCurrency: str(sell),
        amount: str(amount),
        amountCurrency: str(onBuy ? buy : sell),
        validForSeconds: num('30'),
      })),
  },
  {
    name: 'POST trades',
    method: 'POST',
    segments: [['trades']],
    body: fc.constant({
      quoteId: ref('freshQuoteV3'),
      clientReferenceId: str('ref-1'),
      metadata: obj({ desk: str('fx') }),
    }),
  },
  {
    name: 'POST reverse-quote',
    method: 'POST',
    segments: [['trades'], [{ ref: 'tradeV3' }], ['reverse-quote']],
    body: fc.constant({ validForSeconds: num('30') }),
  },
  {
    name: 'POST reverse',
    method: 'POST',
    segments: [['trades'], [{ ref: 'reversalTradeV3' }], ['reverse']],
    body: fc.constant({ quoteId: ref('reversalQuoteV3'), clientReferenceId: str('rev-1') }),
  },
  {
    name: 'POST settle',
    method: 'POST',
    segments: [['trades'], [{ ref: 'settleableV3' }], ['settle']],
    body: fc.constant({}),
  },
  {
    name: 'POST withdrawals',
    method: 'POST',
    segments: [['withdrawals']],
    body: fc.constantFrom('1.00', '2.50').map((amount) => ({
      withdrawalAccountId: ref('coinAccountV3'),
      withdrawalAmount: str(amount),
      currency: str('USDC'),
      comments: str('payout'),
    })),
  },
  {
    name: 'POST withdrawal-accounts',
    method: 'POST',
    segments: [['withdrawal-accounts']],
    body: fc.constant({
      currency: str('USD'),
      assetType: str('FIAT'),
      accountName: str('Operating account'),
      transferType: str('FEDWIRE'),
      bankName: str('JPMorgan Chase Bank, N.A.'),
      accountNumber: str('000123456789'),
      routingNumber: str('021000021'),
      comments: str('main'),
      memo: str('invoice'),
    }),
  },
  {
    name: 'POST sandbox deposit',
    method: 'POST',
    segments: [['sandbox'], ['deposits']],
    body: fc.constant({
      currency: str('USD'),
      amount: str('5.00'),
      referenceId: str('dep-1'),
      comments: str('top-up'),
    }),
  },
  {
    name: 'POST webhook-endpoints',
    method: 'POST',
    segments: [['webhook-endpoints']],
    body: fc.constant({ url: str('https://hooks.example.com/fx'), eventTypes: { a: [str('trade.executed')] } }),
  },
  {
    name: 'POST sandbox withdrawal fail',
    method: 'POST',
    segments: [['sandbox'], ['withdrawals'], [{ ref: 'freshWithdrawalV3' }], ['fail']],
    body: fc.constant({ failureReason: str('rail down') }),
  },
  {
    name: 'POST sandbox withdrawal complete',
    method: 'POST',
    segments: [['sandbox'], ['withdrawals'], [{ ref: 'freshWithdrawalV3' }], ['complete']],
  },
  { name: 'DELETE webhook-endpoint', method: 'DELETE', segments: [['webhook-endpoints'], [{ ref: 'webhookV3' }]] },
];

function v3Requests(): fc.Arbitrary<FuzzRequest> {
  return fc.constantFrom(...V3_TEMPLATES).chain((template) => {
    const write = template.method !== 'GET';
    const segments = fc.constant(tagged<readonly Segment[]>([['v3'], ['fx'], ...template.segments]));
    const sources: Sources = {
      ...commonSources(template.method, write, template.query ?? [], template.body ?? null),
      segments: { clean: segments, any: segments },
      auth: { clean: fc.constant(V3_AUTH_CLEAN), any: v3Auth, hostile: v3AuthHostile, faultWeight: 2 },
    };
    return assemble('v3', template.name, sources, []);
  });
}

// ---------------------------------------------------------------------------------------------
// Paths of no generation: the gateway's own, near misses, and parser bait.

const STRAY_TARGETS: readonly (readonly Piece[])[] = [
  ['/'],
  ['/healthz'],
  ['/readyz'],
  ['/favicon.ico'],
  ['/v4/fx/pairs'],
  ['/V1/brokerage/', { ref: 'orgId' }, '/balances'],
  ['/V3/fx/pairs'],
  ['//v3/fx/pairs'],
  ['//v1/brokerage/', { ref: 'orgId' }, '/balances'],
  ['/v3'],
  ['/v3/'],
  ['/v3/fx'],
  ['/v3%2Ffx%2Fpairs'],
  ['/v1%2Fbrokerage%2F', { ref: 'orgId' }, '%2Fbalances'],
  ['/%2e%2e/v3/fx/pairs'],
  ['/..%2Fv3/fx/pairs'],
  ['/%zz'],
  ['/%'],
  ['/', { raw: [0x00] }],
  ['/', { raw: [0xed, 0xa0, 0x80] }],
  ['/v1x/brokerage'],
  ['/v3fx/pairs'],
  ['*'],
  ['http://127.0.0.1/v3/fx/pairs'],
  ['/healthz?', { raw: [0x00] }],
  ['/readyz%00'],
];

function strayRequests(): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      target: fc.constantFrom(...STRAY_TARGETS),
      method: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom(...OTHER_METHODS) },
        { weight: 1, arbitrary: fc.constantFrom(...BROKEN_METHODS) },
      ),
      auth: fc.oneof(fc.constant(tagged<AuthSpec>({ kind: 'none' })), v3Auth, legacyAuth),
      headers: headerSpecs(false),
      body: bodies(null, false),
    })
    .map((r): FuzzRequest => ({
      family: 'other',
      operation: 'stray path',
      method: r.method,
      target: r.target,
      auth: r.auth.value,
      headers: r.headers.value,
      body: r.body.value,
      chunked: false,
      tags: ['path:stray', ...r.auth.tags, ...r.headers.tags, ...r.body.tags],
    }));
}

/** Everything, in the proportions the run wants: most traffic legacy, a third through /v3. */
export function fuzzRequests(mappings: LegacyMappings): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(
    { weight: 30, arbitrary: legacyRequests(mappings, 'v1') },
    { weight: 34, arbitrary: legacyRequests(mappings, 'v2') },
    { weight: 30, arbitrary: v3Requests() },
    { weight: 6, arbitrary: strayRequests() },
  );
}

// ---------------------------------------------------------------------------------------------
// The sweep: every string of every valid body, and every query parameter, hostile in turn.

/** NUL and a lone surrogate, each as a JSON escape and as raw bytes. */
const SWEEP_STRINGS: readonly Tagged<{ value: JsonNode; key: JsonKey }>[] = [
  tagged({ value: str('a\u0000b'), key: 'a\u0000b' }, 'body:nul'),
  tagged({ value: str('a\ud800b'), key: 'a\ud800b' }, 'body:lone-surrogate'),
  tagged(
    { value: { bytes: [0x22, 0x61, 0x00, 0x62, 0x22] } as JsonNode, key: { bytes: [0x61, 0x00, 0x62] } as JsonKey },
    'body:raw-nul',
  ),
  tagged(
    {
      value: { bytes: [0x22, 0x61, 0xed, 0xa0, 0x80, 0x62, 0x22] } as JsonNode,
      key: { bytes: [0x61, 0xed, 0xa0, 0x80, 0x62] } as JsonKey,
    },
    'body:raw-surrogate-bytes',
  ),
];
/** The same in a query value: percent-encoded NUL, an encoded lone surrogate, an overlong NUL. */
const SWEEP_QUERY_VALUES: readonly Tagged<string>[] = [
  tagged('a%00b', 'query:nul'),
  tagged('a%ED%A0%80b', 'query:lone-surrogate'),
  tagged('a%C0%80b', 'query:overlong-nul'),
];

/**
 * Clean requests, each with one string made hostile: every string (value or key, at any depth)
 * of every operation's valid body, and every query parameter an operation takes. The random run
 * reaches each of them only now and then; this reaches all of them every time.
 */
export function sweepRequests(mappings: LegacyMappings, seed: number): FuzzRequest[] {
  const one = <T>(arb: fc.Arbitrary<T>): T => fc.sample(arb, { seed, numRuns: 1 })[0]!;
  const out: FuzzRequest[] = [];
  const add = (
    family: Family,
    operation: string,
    method: string,
    segments: readonly Segment[],
    write: boolean,
    fields: Record<string, JsonNode> | null,
    queryNames: readonly string[],
    auth: AuthSpec,
  ) => {
    const headers = toHeaders(cleanHeaderParts(write)).value;
    const request = (target: Piece[], body: BodySpec, tags: readonly string[]): FuzzRequest => ({
      family,
      operation,
      method,
      target,
      auth,
      headers,
      body,
      chunked: false,
      tags: ['mode:sweep', ...tags],
    });
    if (fields !== null) {
      const node = obj(fields);
      for (let slot = 0; slot < textSlots(node); slot += 1) {
        for (const text of SWEEP_STRINGS)
          out.push(
            request(
              joinTarget(segments, null),
              { kind: 'json', node: replaceText(node, slot, text.value.value, text.value.key), edits: [] },
              ['body:one-hostile-string', ...text.tags],
            ),
          );
      }
    }
    for (const name of queryNames) {
      for (const value of SWEEP_QUERY_VALUES) {
        out.push(
          request(
            joinTarget(segments, [`${name}=`, value.value]),
            fields === null ? { kind: 'none' } : { kind: 'json', node: obj(fields), edits: [] },
            value.tags,
          ),
        );
      }
    }
  };
  for (const generation of LEGACY_GENERATIONS) {
    for (const operation of LEGACY_OPERATIONS[generation] as readonly string[]) {
      const mapping = (mappings.endpoints[generation] as Record<string, EndpointMapping>)[operation]!;
      const valid = legacyValidBody(operation, mapping, true);
      const segments: Segment[] = [
        [generation],
        ['brokerage'],
        [{ ref: 'orgId' }],
        ...operation.split('/').map((part): Segment => (part.startsWith('{') ? [{ ref: 'tradeUuid' }] : [part])),
      ];
      add(
        generation,
        operation,
        mapping.method,
        segments,
        mapping.method === 'POST',
        valid && one(valid),
        legacyQueryNames(mapping),
        LEGACY_AUTH_CLEAN.value,
      );
    }
  }
  for (const template of V3_TEMPLATES) {
    add(
      'v3',
      template.name,
      template.method,
      [['v3'], ['fx'], ...template.segments],
      template.method !== 'GET',
      template.body ? one(template.body) : null,
      template.query ?? [],
      V3_AUTH_CLEAN.value,
    );
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Rendering.

/** Every Ref a request names, so the runner can make what it needs before sending. */
export function refsOf(request: FuzzRequest): Set<Ref> {
  const refs = new Set<Ref>();
  const pieces = (list: readonly Piece[]) =>
    list.forEach((p) => typeof p === 'object' && 'ref' in p && refs.add(p.ref));
  const node = (n: JsonNode): void => {
    if ('ref' in n) refs.add(n.ref);
    else if ('o' in n) n.o.forEach(([, v]) => node(v));
    else if ('a' in n) n.a.forEach(node);
  };
  pieces(request.target);
  if (request.body.kind === 'json') node(request.body.node);
  if (request.body.kind === 'oversize') node(request.body.base);
  return refs;
}

export type RefValues = ReadonlyMap<Ref, string>;

function refValue(values: RefValues, r: Ref): string {
  const value = values.get(r);
  if (value === undefined) throw new Error(`no value for ${r}`);
  return value;
}

export function renderPieces(pieces: readonly Piece[], values: RefValues): Buffer {
  return Buffer.concat(
    pieces.map((p) =>
      typeof p === 'string'
        ? Buffer.from(p, 'utf8')
        : 'raw' in p
          ? Buffer.from(p.raw)
          : Buffer.from(refValue(values, p.ref), 'utf8'),
    ),
  );
}

function writeNode(node: JsonNode, out: Buffer[], values: RefValues): void {
  if ('s' in node) out.push(Buffer.from(JSON.stringify(node.s), 'utf8'));
  else if ('n' in node) out.push(Buffer.from(node.n, 'utf8'));
  else if ('ref' in node) out.push(Buffer.from(JSON.stringify(refValue(values, node.ref)), 'utf8'));
  else if ('bytes' in node) out.push(Buffer.from(node.bytes));
  else if ('deep' in node) {
    const open = node.style === 'object' ? '{"a":' : '[';
    const close = node.style === 'object' ? '}' : node.style === 'array' ? ']' : '';
    out.push(Buffer.from(open.repeat(node.deep) + (node.style === 'object' ? '1' : '') + close.repeat(node.deep)));
  } else if ('a' in node) {
    out.push(Buffer.from('['));
    node.a.forEach((item, i) => {
      if (i > 0) out.push(Buffer.from(','));
      writeNode(item, out, values);
    });
    out.push(Buffer.from(']'));
  } else {
    out.push(Buffer.from('{'));
    node.o.forEach(([key, value], i) => {
      if (i > 0) out.push(Buffer.from(','));
      out.push(
        typeof key === 'string'
          ? Buffer.from(JSON.stringify(key), 'utf8')
          : Buffer.concat([Buffer.from('"'), Buffer.from(key.bytes), Buffer.from('"')]),
      );
      out.push(Buffer.from(':'));
      writeNode(value, out, values);
    });
    out.push(Buffer.from('}'));
  }
}

export function renderJson(node: JsonNode, values: RefValues): Buffer {
  const out: Buffer[] = [];
  writeNode(node, out, values);
  return Buffer.concat(out);
}

function applyEdit(text: Buffer, edit: TextEdit): Buffer {
  switch (edit.op) {
    case 'truncate':
      return text.subarray(0, Math.floor(text.length * edit.at));
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), text]);
    case 'utf16':
      return Buffer.from(text.toString('utf8'), 'utf16le');
    case 'insert': {
      const at = Math.floor(text.length * edit.at);
      return Buffer.concat([text.subarray(0, at), Buffer.from(edit.bytes), text.subarray(at)]);
    }
    case 'append':
      return Buffer.concat([text, Buffer.from(edit.text, 'utf8')]);
  }
}

/** The body's bytes, or undefined for none. */
export function renderBody(body: BodySpec, values: RefValues): Buffer | undefined {
  switch (body.kind) {
    case 'none':
      return undefined;
    case 'bytes':
      return Buffer.from(body.bytes);
    case 'json':
      return body.edits.reduce(applyEdit, renderJson(body.node, values));
    case 'oversize': {
      const base = renderJson(body.base, values);
      const room = Math.max(0, body.size - base.length);
      switch (body.style) {
        case 'pad-field': {
          const inner = base.length > 2 ? `${base.subarray(0, base.length - 1).toString('utf8')},` : '{';
          return Buffer.from(`${inner}"padding":"${'x'.repeat(Math.max(0, body.size - inner.length - 14))}"}`, 'utf8');
        }
        case 'whitespace':
          return Buffer.concat([base, Buffer.alloc(room, 0x20)]);
        case 'array':
          return Buffer.from(`[${'1,'.repeat(Math.max(0, Math.floor(body.size / 2) - 1))}1]`);
        case 'junk':
          return Buffer.alloc(body.size, 0x78);
        case 'nul-bytes':
          return Buffer.alloc(body.size, 0);
        case 'escaped-nul':
          return Buffer.from(`{"clientReferenceId":"${'\\u0000'.repeat(Math.max(1, Math.floor(body.size / 6)))}"}`);
      }
    }
  }
}

/** A request as a reader of the report needs it: bytes that are not printable ASCII as \xNN. */
export function printable(bytes: Buffer, max = 240): string {
  let out = '';
  for (const byte of bytes.subarray(0, max))
    out += byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, '0')}`;
  return bytes.length > max ? `${out}... (${bytes.length} bytes)` : out;
}
