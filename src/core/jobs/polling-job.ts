/**
 * Background jobs that poll the database for work: a round claims items one at a time (each in
 * its own transaction, FOR UPDATE SKIP LOCKED, so any number of processes can run the job), and
 * rounds repeat on a timer until the job is stopped. The deposit completer and the withdrawal
 * processor are two such jobs; this module is their rounds, run by the shared poll loop
 * (src/lib/jobs/poll-loop.ts).
 */
import type { FastifyBaseLogger } from 'fastify';

import { createPollLoop } from '../../lib/jobs/poll-loop.js';

export type JobLog = Pick<FastifyBaseLogger, 'error'>;

/**
 * What one claim did: `done` changed something, `skip` found an item with nothing to do yet
 * (it is left alone for the rest of the round), `none` found nothing due (the round ends).
 */
export type ClaimResult = 'done' | 'skip' | 'none';

/** What a deployment may set on a polling job; the rest is the job's own. */
export interface PollingJobOptions {
  /** Pause between two rounds, counted from the end of the previous one. */
  readonly intervalMs?: number;
  /** The most items one round claims; the next round picks up the rest. */
  readonly batchSize?: number;
  readonly log?: JobLog;
}

export const POLLING_JOB_DEFAULTS = { intervalMs: 1000, batchSize: 100 } as const;

export interface ClaimRound {
  /** The most claims one round makes; the next round picks up the rest. */
  readonly batchSize: number;
  /**
   * Claims and handles one item, not one of `skip`. `claimed(id)` names it as soon as it is
   * locked, so that a failure after that can be logged and skipped.
   */
  claimOne(skip: readonly string[], claimed: (id: string) => void): Promise<ClaimResult>;
  /** Names the job and its items in logs, e.g. `{ job: 'deposit completer', item: 'depositId' }`. */
  readonly names: { readonly job: string; readonly item: string };
}

/**
 * One round: claims until nothing is due or the batch is used. An item whose handling failed is
 * skipped for the rest of the round, so one that keeps failing cannot hold back the others; the
 * next round tries it again. A failure before anything was claimed (the database is down) ends
 * the round.
 */
export async function runClaimRound(round: ClaimRound, log: JobLog | undefined): Promise<number> {
  let done = 0;
  const skip: string[] = [];
  for (let claims = 0; claims < round.batchSize; claims += 1) {
    let claimedId: string | null = null;
    try {
      const result = await round.claimOne(skip, (id) => {
        claimedId = id;
      });
      if (result === 'none') break;
      if (result === 'done') done += 1;
      else skip.push(claimedId!);
    } catch (error) {
      log?.error(
        { err: error, [round.names.item]: claimedId },
        `${round.names.job}: handling an item failed; it is retried on the next round`,
      );
      if (claimedId === null) break;
      skip.push(claimedId);
    }
  }
  return done;
}

export interface PollingJob {
  /** Starts polling (logging failures to `log` unless the job has one); a second call does nothing. */
  start(log?: JobLog): void;
  /** Stops polling and waits for the round in progress, if any. */
  stop(): Promise<void>;
  /** One round, now: returns how many items it changed. */
  runOnce(): Promise<number>;
}

/** Runs `claims` every intervalMs, counted from the end of the previous round, on the options or their defaults. */
export function createPollingJob(options: PollingJobOptions, claims: Omit<ClaimRound, 'batchSize'>): PollingJob {
  const round: ClaimRound = { ...claims, batchSize: options.batchSize ?? POLLING_JOB_DEFAULTS.batchSize };
  let log = options.log;
  const runOnce = () => runClaimRound(round, log);
  const loop = createPollLoop({
    name: claims.names.job,
    intervalMs: options.intervalMs ?? POLLING_JOB_DEFAULTS.intervalMs,
    tick: async () => {
      await runOnce();
      return 'wait';
    },
    // A round logs its items' failures itself; this is one that failed as a whole.
    onError: (error) =>
      log?.error({ err: error }, `${claims.names.job}: a round failed; it runs again after the interval`),
  });

  return {
    start(startLog) {
      if (loop.running) return;
      log ??= startLog;
      loop.start();
    },
    stop: () => loop.stop(),
    runOnce,
  };
}
