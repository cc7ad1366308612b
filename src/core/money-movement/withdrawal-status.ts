/**
 * A withdrawal's statuses and the legal moves between them: a leaf of money-movement/, so the
 * metrics (core-metrics.ts) can name the statuses without importing the withdrawals themselves.
 */
export const WITHDRAWAL_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'CANCELLED'] as const;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

/** The legal next statuses of each status; final statuses have none. */
export const WITHDRAWAL_TRANSITIONS: Readonly<Record<WithdrawalStatus, readonly WithdrawalStatus[]>> = Object.freeze({
  PENDING: ['PROCESSING', 'CANCELLED', 'FAILED'],
  PROCESSING: ['COMPLETED', 'FAILED'],
  COMPLETED: [],
  FAILED: [],
  CANCELLED: [],
});
