/**
 * The cryptography floor of a request: what node:crypto's ES256 (ECDSA P-256 / SHA-256, IEEE
 * P-1363 signatures, the product's only key type) costs on this machine, measured in the load
 * process during the run, and what a row's request cannot cost a process below. A core verifies
 * two signatures per v3 request (the token's and the request signature); a gateway's legacy
 * request costs one verification (the legacy token) and two signatures (its own token and
 * request signature) per v3 call it makes; a passthrough checks nothing. What a process spends
 * above its floor is its own CPU. Touches node:crypto only.
 */
import { generateKeyPairSync, sign, verify } from 'node:crypto';

export interface CryptoCost {
  /** One ES256 verification, in microseconds. */
  readonly verifyMicros: number;
  /** One ES256 signature, in microseconds. */
  readonly signMicros: number;
}

/** A signing input the size of a token's (header and claims, base64url). */
const SIGNING_INPUT = Buffer.from('e'.repeat(300));
/** Operations per batch; the cost is the median batch's. */
const BATCH = 200;
const BATCHES = 5;

/** This thread's CPU time so far, in microseconds: a wait for a CPU on the shared machine is not counted, as it is not in a server's. */
function threadCpuMicros(): number {
  const usage = process.threadCpuUsage();
  return usage.user + usage.system;
}

function medianBatch(operation: () => void): number {
  const costs: number[] = [];
  for (let batch = 0; batch < BATCHES; batch += 1) {
    const started = threadCpuMicros();
    for (let index = 0; index < BATCH; index += 1) operation();
    costs.push((threadCpuMicros() - started) / BATCH);
  }
  return costs.sort((a, b) => a - b)[Math.floor(BATCHES / 2)]!;
}

/** ES256 sign and verify, one at a time on this thread, as a server's thread does one: CPU time per operation. */
export function measureCryptoCost(): CryptoCost {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const options = { dsaEncoding: 'ieee-p1363' } as const;
  const signature = sign('sha256', SIGNING_INPUT, { key: privateKey, ...options });
  return {
    verifyMicros: medianBatch(() => verify('sha256', SIGNING_INPUT, { key: publicKey, ...options }, signature)),
    signMicros: medianBatch(() => sign('sha256', SIGNING_INPUT, { key: privateKey, ...options })),
  };
}

/** What a row's request does with cryptography in a process, besides the core's checks of the v3 requests it serves. */
export type RowCryptography =
  /** A v3 request, direct or relayed: a gateway signs nothing for it. */
  | 'v3'
  /** A legacy request: the gateway verifies the legacy token and signs each v3 call it makes. */
  | 'legacy';

export interface ProcessFloor {
  readonly micros: number;
  /** How the floor is made, for the report. */
  readonly made: string;
}

/**
 * A core process, by the name the case gives its clock (`core`, or `core (<setting>)`), or the
 * skeleton that does a core's read (skeletons.ts): the v3 requests of a row are counted on these.
 */
export function isCore(app: string): boolean {
  return app === 'core' || app.startsWith('core ') || app === 'v3-read-skeleton';
}

/** The gateway, or the skeleton that does its v1 read (skeletons.ts). */
function isGateway(app: string): boolean {
  return app === 'gateway' || app === 'v1-read-skeleton';
}

/**
 * A process's floor per request of a row, from the requests it served and the v3 calls the row
 * made per request (the core's requests per row request); null for a process without one (a
 * static server, PostgreSQL).
 */
export function processFloor(
  app: string,
  row: RowCryptography,
  v3CallsPerRequest: number,
  cost: CryptoCost,
): ProcessFloor | null {
  const calls = v3CallsPerRequest.toFixed(2);
  if (isCore(app))
    return { micros: 2 * cost.verifyMicros * v3CallsPerRequest, made: `2 verifies x ${calls} v3 requests` };
  if (!isGateway(app)) return null;
  if (row === 'v3') return { micros: 0, made: 'none' };
  return {
    micros: (cost.verifyMicros + 2 * cost.signMicros) * v3CallsPerRequest,
    made: `(1 verify + 2 signs) x ${calls} v3 calls`,
  };
}

/** One process's CPU per request of a row against its floor: `core 226 µs, floor 92 µs (...), 2.5x, own 134 µs`. */
export function formatAgainstFloor(app: string, cpuMicros: number, floor: ProcessFloor | null): string {
  const cpu = `${app} ${cpuMicros.toFixed(0)} µs`;
  if (floor === null) return `${cpu} (no floor)`;
  const ratio = floor.micros > 0 ? `${(cpuMicros / floor.micros).toFixed(1)}x` : 'ratio n/a';
  return `${cpu}, floor ${floor.micros.toFixed(0)} µs (${floor.made}), ${ratio}, own ${(cpuMicros - floor.micros).toFixed(0)} µs`;
}
