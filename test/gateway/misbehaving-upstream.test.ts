/**
 * Every way an upstream can fail to answer, against the real gateway, each bounded by the
 * gateway's total deadline on an upstream call (its timeouts alone time the wait for headers and
 * the gaps between body chunks, so an answer trickling in a byte at a time would meet none):
 * connections refused, no answer, 200 then a byte every 200 ms, half a body then nothing, bytes
 * that are not HTTP, a 200 that is not JSON, an HTML 502. The upstream is a hand-made TCP server
 * on loopback. Each mode: a v1 and a v2 read and write get their legacy 500 envelope, and a /v3
 * read and write an answer or a cut connection, within the deadline and a margin; then the
 * gateway still serves. FXGATE_PRINT_BOUNDS=1 prints how long each request took.
 */
import { randomUUID } from 'node:crypto';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { freePort } from '../support/local-processes.js';
import * as S from './legacy/v3-contract/v3-samples.js';
import { StandInGateway } from './scripted-gateway.js';

const TIMEOUT_MS = 1_000;
const DEADLINE_MS = 2_000;
const TRICKLE_EVERY_MS = 200;
/** Past the deadline: undici's own timers tick coarsely, and the machine is shared. */
const MARGIN_MS = 1_000;

type Mode = 'ok' | 'slow' | 'silent' | 'trickle' | 'half-then-stall' | 'not-http' | 'not-json' | 'html-502';

/** 'slow': each answer whole and valid, in three parts 700 ms apart (under the body timeout). */
const SLOW_GAP_MS = 700;
const SLOW_ANSWERS: Record<string, unknown> = {
  'POST /v3/fx/trades': { data: S.TRADE },
  'GET /v3/fx/balances': S.BALANCES,
  'GET /v3/fx/exposure': S.EXPOSURE,
};

/** A v3 stand-in that misbehaves as `mode` says, one request per connection. */
class MisbehavingUpstream {
  mode: Mode = 'ok';
  private readonly sockets = new Set<Socket>();
  private constructor(private readonly server: Server) {}

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  static async start(): Promise<MisbehavingUpstream> {
    const server = createServer();
    const upstream = new MisbehavingUpstream(server);
    server.on('connection', (socket) => upstream.serve(socket));
    server.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    return upstream;
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    const timers: NodeJS.Timeout[] = [];
    socket.on('close', () => {
      this.sockets.delete(socket);
      for (const timer of timers) clearInterval(timer);
    });
    socket.on('error', () => undefined);
    let head = '';
    const onData = (chunk: Buffer): void => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      socket.resume();
      const [method, path] = head.split(' ', 2) as [string, string];
      this.answer(socket, `${method} ${path.split('?')[0]}`, timers);
    };
    socket.on('data', onData);
  }

  private answer(socket: Socket, call: string, timers: NodeJS.Timeout[]): void {
    const complete = (status: string, type: string, body: string): void => {
      socket.end(
        `HTTP/1.1 ${status}\r\ncontent-type: ${type}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    };
    switch (this.mode) {
      case 'ok':
        return complete(
          '200 OK',
          'application/json',
          JSON.stringify(call === 'GET /v3/fx/balances' ? S.BALANCES : { data: [] }),
        );
      case 'slow': {
        const body = JSON.stringify(SLOW_ANSWERS[call] ?? { data: [] });
        const third = Math.ceil(body.length / 3);
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body.slice(0, third)}`,
        );
        timers.push(setTimeout(() => socket.write(body.slice(third, 2 * third)), SLOW_GAP_MS));
        timers.push(setTimeout(() => socket.end(body.slice(2 * third)), 2 * SLOW_GAP_MS));
        return;
      }
      case 'silent':
        return;
      case 'trickle':
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{');
        timers.push(setInterval(() => socket.write(' '), TRICKLE_EVERY_MS));
        return;
      case 'half-then-stall':
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 200\r\n\r\n');
        socket.write(`{"data":[${'0,'.repeat(45)}`);
        return;
      case 'not-http':
        socket.end('SSH-2.0-OpenSSH_9.6\r\n\u0000\u00ff garbage that is no status line\r\n\r\n');
        return;
      case 'not-json':
        return complete('200 OK', 'application/json', 'this is not JSON {');
      case 'html-502':
        return complete('502 Bad Gateway', 'text/html', '<html><body><h1>502 Bad Gateway</h1></body></html>');
    }
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const INTERNAL = { status: 'error', message: 'An internal error has occurred' };

let upstream: MisbehavingUpstream;
/** In front of the misbehaving upstream. */
let gateway: StandInGateway;
/** In front of a port nothing listens on. */
let refused: StandInGateway;
const bounds: Record<string, Record<string, number>> = {};

beforeAll(async () => {
  upstream = await MisbehavingUpstream.start();
  gateway = await StandInGateway.start({ url: upstream.url, timeoutMs: TIMEOUT_MS, deadlineMs: DEADLINE_MS });
  refused = await StandInGateway.start({
    url: `http://127.0.0.1:${await freePort()}`,
    timeoutMs: TIMEOUT_MS,
    deadlineMs: DEADLINE_MS,
  });
});
afterAll(async () => {
  await gateway?.close();
  await refused?.close();
  await upstream?.close();
  if (process.env.FXGATE_PRINT_BOUNDS)
    process.stdout.write(`misbehaving upstream, ms per request: ${JSON.stringify(bounds)}\n`);
});

interface Outcome {
  readonly name: string;
  readonly status: number;
  /** The body as received, or null when the connection was cut during it. */
  readonly text: string | null;
  readonly elapsedMs: number;
}

async function timed(
  gw: StandInGateway,
  name: string,
  method: 'GET' | 'POST',
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<Outcome> {
  const started = Date.now();
  const response = await request(`${gw.url}${path.replace('{org}', gw.key.file.orgId)}`, {
    method,
    body,
    headers: {
      authorization: `Bearer ${gw.token()}`,
      'x-app-mode': 'SANDBOX',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
  });
  let text: string | null;
  try {
    text = await response.body.text();
  } catch {
    text = null;
  }
  return { name, status: response.statusCode, text, elapsedMs: Date.now() - started };
}

/** v1 and v2, a read and a write each: the reads are one v3 read, the writes one v3 write. */
function legacyRequests(gw: StandInGateway): Promise<Outcome[]> {
  const trade = JSON.stringify({ quoteId: randomUUID() });
  return Promise.all([
    timed(gw, 'v1 read', 'GET', '/v1/brokerage/{org}/balances'),
    timed(gw, 'v1 write', 'POST', '/v1/brokerage/{org}/trade', trade),
    timed(gw, 'v2 read', 'GET', '/v2/brokerage/{org}/balances'),
    timed(gw, 'v2 write', 'POST', '/v2/brokerage/{org}/trade', trade, { 'idempotency-key': randomUUID() }),
  ]);
}

function v3Requests(gw: StandInGateway): Promise<Outcome[]> {
  return Promise.all([
    timed(gw, 'v3 read', 'GET', '/v3/fx/pairs'),
    timed(gw, 'v3 write', 'POST', '/v3/fx/quotes', '{"amount":"1.00"}', { 'idempotency-key': randomUUID() }),
  ]);
}

function record(mode: string, outcomes: readonly Outcome[]): void {
  bounds[mode] ??= {};
  for (const outcome of outcomes) bounds[mode]![outcome.name] = outcome.elapsedMs;
}

/** What the /v3 client gets: the v3 envelope the gateway wrote, the upstream's own answer relayed, or a cut connection. */
type V3Expectation =
  | { readonly status: number; readonly code: string; readonly retryStrategy: string }
  | { readonly status: number; readonly relayed: string }
  | { readonly status: number; readonly cut: true };

const UNAVAILABLE = { status: 503, code: 'SERVICE_UNAVAILABLE', retryStrategy: 'RETRY_WITH_BACKOFF' } as const;
const MAY_HAVE_TAKEN_EFFECT = { status: 500, code: 'INTERNAL_ERROR', retryStrategy: 'CHECK_STATE_THEN_RETRY' } as const;

const MODES: ReadonlyArray<readonly [string, Mode | 'refused', V3Expectation, V3Expectation]> = [
  ['refuses connections', 'refused', UNAVAILABLE, UNAVAILABLE],
  ['never answers', 'silent', UNAVAILABLE, MAY_HAVE_TAKEN_EFFECT],
  ['sends 200, then a byte every 200 ms', 'trickle', { status: 200, cut: true }, { status: 200, cut: true }],
  ['sends half a body, then nothing', 'half-then-stall', { status: 200, cut: true }, { status: 200, cut: true }],
  ['answers bytes that are not HTTP', 'not-http', UNAVAILABLE, MAY_HAVE_TAKEN_EFFECT],
  [
    'answers 200 with a body that is not JSON',
    'not-json',
    { status: 200, relayed: 'this is not JSON {' },
    { status: 200, relayed: 'this is not JSON {' },
  ],
  [
    'answers an HTML 502',
    'html-502',
    { status: 502, relayed: '<html><body><h1>502 Bad Gateway</h1></body></html>' },
    { status: 502, relayed: '<html><body><h1>502 Bad Gateway</h1></body></html>' },
  ],
];

function expectV3(outcome: Outcome, expected: V3Expectation): void {
  expect(outcome.status, outcome.name).toBe(expected.status);
  if ('cut' in expected) {
    // A truncated body never looks whole.
    expect(outcome.text, outcome.name).toBeNull();
  } else if ('relayed' in expected) {
    expect(outcome.text, outcome.name).toBe(expected.relayed);
  } else {
    expect(JSON.parse(outcome.text ?? 'null'), outcome.name).toMatchObject({
      error: { code: expected.code, retryStrategy: expected.retryStrategy },
    });
  }
}

async function expectStillServing(gw: StandInGateway, mode: Mode | 'refused'): Promise<void> {
  const health = await request(`${gw.url}/healthz`);
  expect(health.statusCode).toBe(200);
  await health.body.dump();
  if (mode === 'refused') return;
  upstream.mode = 'ok';
  const [read, legacy] = await Promise.all([
    timed(gw, 'v3 read', 'GET', '/v3/fx/pairs'),
    timed(gw, 'v2 read', 'GET', '/v2/brokerage/{org}/balances'),
  ]);
  expect(read.status).toBe(200);
  expect(read.text).toBe('{"data":[]}');
  expect(legacy.status, legacy.text ?? '').toBe(200);
}

describe.each(MODES)('an upstream that %s', (_name, mode, v3Read, v3Write) => {
  const gw = (): StandInGateway => (mode === 'refused' ? refused : gateway);

  it('v1 and v2, a read and a write: the legacy 500 within the deadline, and the gateway keeps serving', async () => {
    if (mode !== 'refused') upstream.mode = mode;
    const outcomes = await legacyRequests(gw());
    record(mode, outcomes);
    for (const outcome of outcomes) {
      expect(outcome.status, `${outcome.name}: ${outcome.text}`).toBe(500);
      expect(JSON.parse(outcome.text ?? 'null'), outcome.name).toEqual(INTERNAL);
      expect(outcome.elapsedMs, outcome.name).toBeLessThan(DEADLINE_MS + MARGIN_MS);
      // Only the deadline could end a trickle: each byte restarts the body timeout.
      if (mode === 'trickle') expect(outcome.elapsedMs, outcome.name).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    }
    await expectStillServing(gw(), mode);
  });

  it('/v3, a read and a write: an answer or a cut connection within the deadline, and the gateway keeps serving', async () => {
    if (mode !== 'refused') upstream.mode = mode;
    const [read, write] = await v3Requests(gw());
    record(mode, [read!, write!]);
    expectV3(read!, v3Read);
    expectV3(write!, v3Write);
    for (const outcome of [read!, write!]) {
      expect(outcome.elapsedMs, outcome.name).toBeLessThan(DEADLINE_MS + MARGIN_MS);
      if (mode === 'trickle') expect(outcome.elapsedMs, outcome.name).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    }
    await expectStillServing(gw(), mode);
  });
});

describe('an upstream that answers each call in 1.4 s', () => {
  it('bounds a legacy request by one deadline over all its v3 calls, not one per call', async () => {
    upstream.mode = 'slow';
    const trade = JSON.stringify({ quoteId: randomUUID() });
    const [read, write] = await Promise.all([
      // One call, well inside the deadline: answered.
      timed(gateway, 'v2 read', 'GET', '/v2/brokerage/{org}/balances'),
      // The trade, then the balances and exposure its answer composes: 2.8 s of calls in all.
      timed(gateway, 'v2 write', 'POST', '/v2/brokerage/{org}/trade', trade, { 'idempotency-key': randomUUID() }),
    ]);
    record('slow', [read!, write!]);
    expect(read!.status, read!.text ?? '').toBe(200);
    expect(read!.elapsedMs).toBeGreaterThanOrEqual(2 * SLOW_GAP_MS - 50);
    expect(write!.status, write!.text ?? '').toBe(500);
    expect(JSON.parse(write!.text ?? 'null')).toEqual(INTERNAL);
    expect(write!.elapsedMs).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(write!.elapsedMs).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    await expectStillServing(gateway, 'slow');
  });
});
