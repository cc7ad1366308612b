/**
 * The legacy rate limit in the pipeline, the real gateway in front of a scripted v3
 * (RecordingUpstream, a real HTTP server on loopback), so that what reaches v3 is seen: each key's
 * budget per class (3 reads, 2 writes per 10 s here) on v1 and v2, charged after the token and
 * before any v3 call; the key's own RateLimit headers on every answer, never v3's; the 429 in
 * the generation's envelope with Retry-After; two keys of one org apart; a token that proves no
 * key charged to the client address; v3's own 429 told apart; and a store that is down letting
 * requests through, as v3's limiter does.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { RedisStore } from '../../../../src/cli/store/redis-store.js';
import { type LoadedKey, loadKey } from '../../../../src/lib/keys/key-file.js';
import { legacyToken } from '../../../support/independent-signing.js';
import type { UpstreamAnswer } from '../../recording-upstream.js';
import { ScriptedGateway } from '../../scripted-gateway.js';
import * as S from '../v3-contract/v3-samples.js';

const READS = 3;
const WRITES = 2;
const LIMITS = { reads: READS, writes: WRITES };
const TOO_MANY = { status: 'error', message: 'Too many requests, please try again later' };
const AUTH_401 = {
  status: 'error',
  message: 'The authorization key provided is either invalid or expired, please try again',
};
const QUOTE_BODY = '{"amount":1,"buy":"EUR","sell":"USD","referencedUnit":"EUR"}';
/** What v3 says of the gateway's own credential: never what a legacy client is told. */
const V3_RATE_HEADERS = { 'ratelimit-limit': '100', 'ratelimit-reset': '9', 'ratelimit-remaining': '98' };

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly json: unknown;
}

const ok = (body: unknown, headers: Record<string, string> = {}): UpstreamAnswer => ({
  status: 200,
  headers: { 'content-type': 'application/json', ...V3_RATE_HEADERS, ...headers },
  body: JSON.stringify(body),
});

/** v3 answering the reads and quotes these tests send. */
function scriptV3(gw: ScriptedGateway): void {
  gw.upstream.answerFor = (sent) => (sent.method === 'POST' ? ok({ data: S.QUOTE }) : ok(S.BALANCES));
}

async function send(
  gw: ScriptedGateway,
  generation: 'v1' | 'v2',
  key: LoadedKey,
  operation: 'balances' | 'generate_quote',
  headers: Record<string, string> = {},
): Promise<Answer> {
  const write = operation === 'generate_quote';
  const response = await request(`${gw.url}/${generation}/brokerage/${key.file.orgId}/${operation}`, {
    method: write ? 'POST' : 'GET',
    headers: {
      authorization: `Bearer ${legacyToken(key)}`,
      'x-app-mode': 'SANDBOX',
      ...(write
        ? { 'content-type': 'application/json', 'idempotency-key': `rl-${Math.random().toString(36).slice(2)}` }
        : {}),
      ...headers,
    },
    ...(write ? { body: QUOTE_BODY } : {}),
  });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, json: JSON.parse(text) as unknown };
}

/** A whole number of seconds, in [min, max]. */
function seconds(value: unknown, min: number, max: number): number {
  expect(value).toMatch(/^\d+$/);
  const n = Number(value);
  expect(n).toBeGreaterThanOrEqual(min);
  expect(n).toBeLessThanOrEqual(max);
  return n;
}

describe('each legacy key has its own budget per class, charged before any v3 call', () => {
  let gw: ScriptedGateway;
  beforeAll(async () => {
    gw = await ScriptedGateway.start({ legacy: () => ({ rateLimits: LIMITS }) });
    scriptV3(gw);
  });
  afterAll(async () => gw?.close());

  /** Another key of the gateway's org, with a budget of its own. */
  async function freshKey(): Promise<LoadedKey> {
    return loadKey(
      await gw.registry.createKey({
        orgId: gw.key.file.orgId,
        scopes: ['view', 'trade', 'withdraw'],
        mode: 'sandbox',
      }),
    );
  }

  it.each(['v1', 'v2'] as const)(
    "%s reads: 3 answered with the key's own headers, then 429 with Retry-After, and v3 never sees the fourth",
    async (generation) => {
      const key = await freshKey();
      const sentBefore = gw.upstream.requests.length;
      const resets: number[] = [];
      for (let i = 0; i < READS; i += 1) {
        const answer = await send(gw, generation, key, 'balances');
        expect(answer.status).toBe(200);
        expect(answer.headers['ratelimit-limit']).toBe(String(READS));
        resets.push(seconds(answer.headers['ratelimit-reset'], 1, 10));
        expect(answer.headers['ratelimit-remaining']).toBeUndefined();
        expect(answer.headers['retry-after']).toBeUndefined();
      }
      // Each request takes a slot: the cell is full again later and later.
      expect([...resets].sort((a, b) => a - b)).toEqual(resets);
      expect(resets[READS - 1]).toBeGreaterThan(resets[0]!);
      const limited = await send(gw, generation, key, 'balances');
      expect(limited.status).toBe(429);
      expect(limited.json).toEqual(TOO_MANY);
      seconds(limited.headers['retry-after'], 1, Math.ceil(10 / READS));
      expect(limited.headers['ratelimit-limit']).toBe(String(READS));
      seconds(limited.headers['ratelimit-reset'], 1, 10);
      expect(gw.upstream.requests.length - sentBefore).toBe(READS);
    },
  );

  it.each(['v1', 'v2'] as const)(
    '%s writes: 2 then 429, apart from the reads, which the key can still make',
    async (generation) => {
      const key = await freshKey();
      const sentBefore = gw.upstream.requests.length;
      for (let i = 0; i < WRITES; i += 1) {
        const answer = await send(gw, generation, key, 'generate_quote');
        expect(answer.status, JSON.stringify(answer.json)).toBe(200);
        expect(answer.headers['ratelimit-limit']).toBe(String(WRITES));
      }
      const limited = await send(gw, generation, key, 'generate_quote');
      expect(limited.status).toBe(429);
      expect(limited.json).toEqual(TOO_MANY);
      seconds(limited.headers['retry-after'], 1, Math.ceil(10 / WRITES));
      expect(limited.headers['ratelimit-limit']).toBe(String(WRITES));
      expect(gw.upstream.requests.length - sentBefore).toBe(WRITES);
      const read = await send(gw, generation, key, 'balances');
      expect(read.status).toBe(200);
      expect(read.headers['ratelimit-limit']).toBe(String(READS));
    },
  );

  it('one budget per key and class, whichever generation spends it; another key of the same org is untouched', async () => {
    const noisy = await freshKey();
    const quiet = await freshKey();
    expect((await send(gw, 'v1', noisy, 'balances')).status).toBe(200);
    expect((await send(gw, 'v2', noisy, 'balances')).status).toBe(200);
    expect((await send(gw, 'v1', noisy, 'balances')).status).toBe(200);
    expect((await send(gw, 'v2', noisy, 'balances')).status).toBe(429);
    expect((await send(gw, 'v1', noisy, 'balances')).status).toBe(429);
    for (let i = 0; i < READS; i += 1) {
      const answer = await send(gw, i % 2 === 0 ? 'v2' : 'v1', quiet, 'balances');
      expect(answer.status).toBe(200);
      expect(answer.headers['ratelimit-limit']).toBe(String(READS));
    }
  });

  it("charges the key's refusals to the key, and answers 429 before the key's 401", async () => {
    const key = await freshKey();
    // A sandbox key declaring live: refused, but its token proved the key.
    for (let i = 0; i < READS; i += 1) {
      const refused = await send(gw, 'v2', key, 'balances', { 'x-app-mode': 'LIVE' });
      expect(refused.status).toBe(401);
      expect(refused.json).toEqual(AUTH_401);
      expect(refused.headers['ratelimit-limit']).toBe(String(READS));
    }
    expect((await send(gw, 'v2', key, 'balances', { 'x-app-mode': 'LIVE' })).status).toBe(429);
    expect((await send(gw, 'v2', key, 'balances')).status).toBe(429);
  });

  it("v3's own 429 (the book's budget of the gateway's credential) is the legacy 429 with v3's Retry-After and the key's own headers", async () => {
    const key = await freshKey();
    gw.upstream.answerFor = () => ({
      status: 429,
      headers: { 'content-type': 'application/json', 'retry-after': '7', ...V3_RATE_HEADERS },
      body: '{"error":{"code":"RATE_LIMIT_EXCEEDED","type":"RATE_LIMITED","message":"slow down","retryStrategy":"WAIT_THEN_RETRY_SAME_KEY","details":{}}}',
    });
    try {
      for (const generation of ['v1', 'v2'] as const) {
        const answer = await send(gw, generation, key, 'balances');
        expect(answer.status).toBe(429);
        expect(answer.json).toEqual(TOO_MANY);
        expect(answer.headers['retry-after']).toBe('7');
        expect(answer.headers['ratelimit-limit']).toBe(String(READS));
        seconds(answer.headers['ratelimit-reset'], 1, 10);
      }
    } finally {
      scriptV3(gw);
    }
  });

  it('charges a token that proves no key to the client address: 401 until its budget is spent, then 429; a key from the address is not stopped', async () => {
    const sentBefore = gw.upstream.requests.length;
    for (let i = 0; i < READS; i += 1) {
      const refused = await send(gw, 'v2', gw.key, 'balances', { authorization: 'Bearer not.a.token' });
      expect(refused.status).toBe(401);
      expect(refused.headers['ratelimit-limit']).toBe(String(READS));
    }
    const limited = await send(gw, 'v1', gw.key, 'balances', { authorization: 'Bearer not.a.token' });
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual(TOO_MANY);
    seconds(limited.headers['retry-after'], 1, Math.ceil(10 / READS));
    // Writes have a cell of their own per address too.
    expect((await send(gw, 'v2', gw.key, 'generate_quote', { authorization: 'Bearer not.a.token' })).status).toBe(401);
    expect(gw.upstream.requests.length).toBe(sentBefore);
    const key = await freshKey();
    expect((await send(gw, 'v2', key, 'balances')).status).toBe(200);
  });
});

describe('a rate-limit store that is down', () => {
  let gw: ScriptedGateway;
  // Nothing listens on port 1 of loopback: every command fails at once.
  const store = new RedisStore({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 100, connectTimeoutMs: 100 });
  beforeAll(async () => {
    gw = await ScriptedGateway.start({ legacy: () => ({ rateLimits: LIMITS, store }) });
    scriptV3(gw);
  });
  afterAll(async () => {
    await gw?.close();
    await store.close();
  });

  it('lets reads through beyond the limit, as v3 does, each with the limit and a reset of 0', async () => {
    for (let i = 0; i < READS + 2; i += 1) {
      const answer = await send(gw, 'v2', gw.key, 'balances');
      expect(answer.status).toBe(200);
      expect(answer.headers['ratelimit-limit']).toBe(String(READS));
      expect(answer.headers['ratelimit-reset']).toBe('0');
    }
  });
});
