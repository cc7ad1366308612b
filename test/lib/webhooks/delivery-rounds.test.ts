/**
 * The webhook workers' shared rounds: the lease of a round, writes one after another, attempts in
 * lanes that stop on the signal, the rounds a stop interrupts, and whether a receiver took a
 * delivery.
 */
import { describe, expect, it } from 'vitest';

import { createPollLoop } from '../../../src/lib/jobs/poll-loop.js';
import {
  attemptInLanes,
  DeliveryRounds,
  oneAfterAnother,
  receiverAccepted,
  roundLeaseUntil,
} from '../../../src/lib/webhooks/delivery-rounds.js';

describe('delivery rounds', () => {
  it('lease a round for its waves of attempts, one more than the batch needs', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(roundLeaseUntil(now, { batchSize: 10, concurrency: 4, requestTimeoutMs: 1000 })).toEqual(
      new Date('2026-01-01T00:00:04Z'),
    );
  });

  it('write one after another, a failed write failing its own call only', async () => {
    const order: string[] = [];
    let release!: () => void;
    const write = oneAfterAnother(async (name: string) => {
      order.push(`start ${name}`);
      if (name === 'a') await new Promise<void>((resolve) => (release = resolve));
      if (name === 'b') throw new Error('b failed');
      order.push(`end ${name}`);
    });
    const a = write('a');
    const b = write('b');
    const c = write('c');
    await Promise.resolve();
    expect(order).toEqual(['start a']);
    release();
    await a;
    await expect(b).rejects.toThrow('b failed');
    await c;
    expect(order).toEqual(['start a', 'end a', 'start b', 'start c', 'end c']);
  });

  it('attempt in lanes of `concurrency`, record each, and stop taking rows once the signal aborts', async () => {
    const rows = ['1', '2', '3', '4', '5'].map((id) => ({ id }));
    const controller = new AbortController();
    let inFlight = 0;
    let most = 0;
    const recorded: string[] = [];
    const reached = await attemptInLanes(rows, {
      concurrency: 2,
      signal: controller.signal,
      now: () => new Date(0),
      attempt: async (row) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await Promise.resolve();
        inFlight -= 1;
        return row.id === '2' ? null : `sent ${row.id}`;
      },
      record: async (row, result) => {
        recorded.push(`${row.id}: ${result ?? 'nothing sent'}`);
        if (row.id === '3') controller.abort();
      },
    });
    expect(most).toBe(2);
    expect([...reached].sort()).toEqual(['1', '2', '3', '4']);
    expect(recorded.sort()).toEqual(['1: sent 1', '2: nothing sent', '3: sent 3', '4: sent 4']);
  });

  it('interrupt the rounds in progress on stop, and refuse rounds once stopped', async () => {
    const rounds = new DeliveryRounds('test worker');
    const loop = createPollLoop({ name: 'test worker', tick: async () => 'wait', intervalMs: 1000, onError: () => {} });
    let closed = false;
    const round = rounds.run(
      (signal) =>
        new Promise<string>((resolve) => signal.addEventListener('abort', () => resolve(String(signal.reason)))),
    );
    const stopped = rounds.stop(loop, async () => {
      closed = true;
    });
    expect(rounds.stop(loop, async () => {})).toBe(stopped);
    await stopped;
    expect(await round).toBe('Error: test worker stopping');
    expect(closed).toBe(true);
    expect(rounds.closed).toBe(true);
    await expect(rounds.run(async () => 1)).rejects.toThrow('the test worker is stopped');
  });

  it('count a delivery taken only on a 2xx answer', () => {
    expect(receiverAccepted({ kind: 'answered', statusCode: 204, durationMs: 5 })).toBe(true);
    expect(receiverAccepted({ kind: 'answered', statusCode: 199, durationMs: 5 })).toBe(false);
    expect(receiverAccepted({ kind: 'answered', statusCode: 300, durationMs: 5 })).toBe(false);
    expect(receiverAccepted({ kind: 'failed', error: 'refused: private', durationMs: 0 })).toBe(false);
  });
});
