/**
 * Payment rails: how a live withdrawal leaves fxgate. The withdrawal processor hands each new
 * withdrawal to a `PaymentRail` (submit) and later asks it how the payment ended (outcome); the
 * ledger and the withdrawal's status follow what the rail says (withdrawals.ts).
 *
 * One adapter ships, `SimulatedPaymentRail`, and it is named so on purpose: no real bank or chain
 * is reachable from fxgate. It accepts every submission, reports the payment complete once a
 * configured delay has passed (FXGATE_RAIL_SIMULATION_DELAY_MS), and fails a configured share of
 * them (FXGATE_RAIL_SIMULATION_FAILURE_RATE). The artefacts it produces have the real formats
 * (Fedwire IMAD/OMAD, SWIFT UETR, chain transaction hashes) but name no real payment.
 *
 * Contract for a real adapter: `submit` must be idempotent per withdrawal id (send it as the
 * rail's own reference). The processor submits while it holds the withdrawal's row lock and
 * commits the PROCESSING status afterwards, so a crash between the two makes it submit the same
 * withdrawal again after a restart; the rail must answer that second submit with the first.
 */
import { randomBytes, randomUUID } from 'node:crypto';

import { DEFAULT_RAIL_SIMULATION_DELAY_MS, DEFAULT_RAIL_SIMULATION_FAILURE_RATE } from '../../lib/config.js';
import type { Decimal } from '../../lib/money.js';

export type WithdrawalAssetType = 'FIAT' | 'STABLECOIN';
export type FiatRail = 'FEDWIRE' | 'SWIFT';

/** What a rail is told about a withdrawal: the payment and where it goes. */
export interface RailWithdrawal {
  readonly id: string;
  readonly currency: string;
  readonly assetType: WithdrawalAssetType;
  readonly amount: Decimal;
  /** The fiat rail (FEDWIRE, SWIFT); null for stablecoins. */
  readonly transferType: FiatRail | null;
  /** The chain of a stablecoin withdrawal; null for fiat. */
  readonly network: string | null;
  /** Account number or IBAN, routing number or BIC, or chain address, as the account holds them. */
  readonly destination: {
    readonly accountNumber: string | null;
    readonly routingNumber: string | null;
    readonly swiftCode: string | null;
    readonly address: string | null;
  };
}

/** The rail's answer to a submission. */
export interface RailSubmission {
  /** When the rail expects the payment to be final; the processor asks for the outcome then. */
  readonly estimatedCompletionAt: Date;
  /** A chain transaction hash is known once the transaction is broadcast, before it is final. */
  readonly transactionHash?: string | null;
}

/** A withdrawal's `paymentDetails`: the proof of payment, keyed by rail (docs/contract.md#resources-withdrawal). */
export type PaymentDetails = Readonly<Record<string, Readonly<Record<string, string>>>>;

export type RailOutcome =
  | { readonly status: 'IN_FLIGHT' }
  | { readonly status: 'COMPLETED'; readonly paymentDetails: PaymentDetails; readonly transactionHash: string | null }
  | { readonly status: 'FAILED'; readonly reason: string };

/** A submitted withdrawal, as the outcome question needs it. */
export interface SubmittedWithdrawal extends RailWithdrawal {
  readonly estimatedCompletionAt: Date | null;
  readonly transactionHash: string | null;
}

export interface PaymentRail {
  /** For logs and operators: which adapter runs. */
  readonly name: string;
  /** Hands the payment to the rail. Idempotent per withdrawal id (see the module comment). */
  submit(withdrawal: RailWithdrawal, now: Date): Promise<RailSubmission>;
  /** How a submitted payment stands now. */
  outcome(withdrawal: SubmittedWithdrawal, now: Date): Promise<RailOutcome>;
}

export interface SimulatedRailOptions {
  /** Time from submission to the final outcome. */
  readonly delayMs?: number;
  /** Share of payments that fail, 0 to 1. */
  readonly failureRate?: number;
  /** Uniform in [0, 1); injectable so tests decide which payments fail. */
  readonly random?: () => number;
}

/** FXGATE_RAIL_SIMULATION_DELAY_MS's and FXGATE_RAIL_SIMULATION_FAILURE_RATE's defaults. */
export const SIMULATED_RAIL_DEFAULTS = {
  delayMs: DEFAULT_RAIL_SIMULATION_DELAY_MS,
  failureRate: DEFAULT_RAIL_SIMULATION_FAILURE_RATE,
} as const;

/** The reason a simulated failure gives; says where it comes from, so nobody looks for a bank. */
export const SIMULATED_FAILURE_REASON = 'Simulated rail failure (FXGATE_RAIL_SIMULATION_FAILURE_RATE)';

export class SimulatedPaymentRail implements PaymentRail {
  readonly name = 'simulated';
  readonly delayMs: number;
  readonly failureRate: number;
  private readonly random: () => number;

  constructor(options: SimulatedRailOptions = {}) {
    this.delayMs = options.delayMs ?? SIMULATED_RAIL_DEFAULTS.delayMs;
    this.failureRate = options.failureRate ?? SIMULATED_RAIL_DEFAULTS.failureRate;
    this.random = options.random ?? Math.random;
    if (!Number.isInteger(this.delayMs) || this.delayMs < 0)
      throw new RangeError(`simulated rail delay must be a whole number of ms >= 0, not ${this.delayMs}`);
    if (!(this.failureRate >= 0 && this.failureRate <= 1))
      throw new RangeError(`simulated rail failure rate must be within 0..1, not ${this.failureRate}`);
  }

  submit(withdrawal: RailWithdrawal, now: Date): Promise<RailSubmission> {
    return Promise.resolve({
      estimatedCompletionAt: new Date(now.getTime() + this.delayMs),
      // A real chain gives the hash at broadcast; so does the simulation.
      transactionHash: withdrawal.assetType === 'STABLECOIN' ? simulatedTransactionHash(withdrawal.network) : null,
    });
  }

  outcome(withdrawal: SubmittedWithdrawal, now: Date): Promise<RailOutcome> {
    if (withdrawal.estimatedCompletionAt !== null && withdrawal.estimatedCompletionAt.getTime() > now.getTime()) {
      return Promise.resolve({ status: 'IN_FLIGHT' });
    }
    // Decided once: the processor records the first final outcome and never asks again.
    if (this.failureRate > 0 && this.random() < this.failureRate)
      return Promise.resolve({ status: 'FAILED', reason: SIMULATED_FAILURE_REASON });
    return Promise.resolve(simulatedCompletion(withdrawal, now));
  }
}

/**
 * The proof of a completed simulated payment: FEDWIRE gets an IMAD and OMAD, SWIFT a UETR, a
 * stablecoin its transaction hash (kept from submission when there was one). Also used by the
 * sandbox completion endpoint, which drives the same lifecycle by hand.
 */
export function simulatedCompletion(
  withdrawal: Pick<SubmittedWithdrawal, 'assetType' | 'transferType' | 'network' | 'transactionHash'>,
  now: Date,
): RailOutcome & { status: 'COMPLETED' } {
  if (withdrawal.assetType === 'STABLECOIN') {
    return {
      status: 'COMPLETED',
      paymentDetails: {},
      transactionHash: withdrawal.transactionHash ?? simulatedTransactionHash(withdrawal.network),
    };
  }
  if (withdrawal.transferType === 'FEDWIRE')
    return { status: 'COMPLETED', paymentDetails: { FEDWIRE: fedwireMessageIds(now) }, transactionHash: null };
  // ISO 20022 / SWIFT gpi: the Unique End-to-end Transaction Reference is a UUID v4.
  return { status: 'COMPLETED', paymentDetails: { SWIFT: { uetr: randomUUID() } }, transactionHash: null };
}

/** The source and destination terminals the simulation names: recognisably not a real bank's. */
const SIMULATED_LTERM_OUT = 'FXGSIM01';
const SIMULATED_LTERM_IN = 'FXGSIM02';

/**
 * Fedwire message ids. IMAD (input message accountability data, 22 characters): input cycle date
 * CCYYMMDD, the sender's 8-character logical terminal (LTERM), a 6-digit sequence number. OMAD
 * (output, 34 characters): the same cycle date, the receiver's LTERM, a 6-digit output
 * sequence, then the output date MMDD, time HHMM and the 4-character Federal Reserve office id.
 */
export function fedwireMessageIds(now: Date): { imad: string; omad: string } {
  const iso = now.toISOString();
  const cycleDate = iso.slice(0, 10).replaceAll('-', '');
  const sequence = () => String(randomBytes(4).readUInt32BE(0) % 1_000_000).padStart(6, '0');
  const outputDate = cycleDate.slice(4);
  const outputTime = iso.slice(11, 16).replace(':', '');
  return {
    imad: `${cycleDate}${SIMULATED_LTERM_OUT}${sequence()}`,
    omad: `${cycleDate}${SIMULATED_LTERM_IN}${sequence()}${outputDate}${outputTime}FXGS`,
  };
}

/**
 * A transaction hash in the chain's own form: 0x and 64 hex digits on EVM chains, 64 hex digits
 * on TRON, a base58 signature of 64 bytes on SOLANA.
 */
export function simulatedTransactionHash(network: string | null): string {
  const bytes = randomBytes(network === 'SOLANA' ? 64 : 32);
  if (network === 'SOLANA') return base58(bytes);
  if (network === 'TRON') return bytes.toString('hex');
  return `0x${bytes.toString('hex')}`;
}

const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Bitcoin-alphabet base58 (leading zero bytes as '1'); only for simulated signatures, so plain BigInt suffices. */
function base58(bytes: Uint8Array): string {
  let value = BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
  let out = '';
  while (value > 0n) {
    out = BASE58_ALPHABET[Number(value % 58n)]! + out;
    value /= 58n;
  }
  for (const byte of bytes) {
    if (byte !== 0) break;
    out = `1${out}`;
  }
  return out;
}
