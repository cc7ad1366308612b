/**
 * attemptDelivery: one POST of a webhook delivery, bounded by its timeout and the worker's stop
 * signal. Both outbox workers' suites drive it against real receivers; these pin its outcomes.
 */
import { describe, expect, it } from 'vitest';

import { DestinationRefusedError } from '../../../src/lib/net/destination-policy.js';
import { attemptDelivery, type WebhookFetcher } from '../../../src/lib/webhooks/delivery-attempt.js';

const POST = {
  url: 'http://127.0.0.1:9/hook',
  headers: { 'content-type': 'application/json' },
  body: Buffer.from('{}'),
};
/** Never settles, and ignores its signal: only the attempt's own race can end it. */
const hanging: WebhookFetcher = () => new Promise(() => {});

describe('attemptDelivery', () => {
  it('answers with the status the receiver gave, having sent the exact bytes', async () => {
    let sent: Buffer | null = null;
    const result = await attemptDelivery(
      async (request) => {
        sent = request.body;
        return { statusCode: 204 };
      },
      POST,
      new AbortController().signal,
      1_000,
    );
    expect(result).toMatchObject({ kind: 'answered', statusCode: 204 });
    expect(sent).toBe(POST.body);
  });

  it('fails at its timeout even when the fetcher ignores the signal', async () => {
    const result = await attemptDelivery(hanging, POST, new AbortController().signal, 50);
    expect(result).toMatchObject({ kind: 'failed', error: 'timeout: no complete answer within 50 ms' });
  });

  it('is interrupted, not failed, when the worker stops during it', async () => {
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 20);
    const result = await attemptDelivery(hanging, POST, stop.signal, 5_000);
    expect(result.kind).toBe('interrupted');
  });

  it('records a refused connection by its code and message', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    const result = await attemptDelivery(() => Promise.reject(refused), POST, new AbortController().signal, 1_000);
    expect(result).toMatchObject({ kind: 'failed', error: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9' });
  });

  it('records a destination the policy refused by its reason alone', async () => {
    const reason = 'rebind.example resolved to 10.0.0.1, a private address; live webhooks must reach a public address';
    const result = await attemptDelivery(
      () => Promise.reject(new DestinationRefusedError(reason)),
      POST,
      new AbortController().signal,
      1_000,
    );
    expect(result).toMatchObject({ kind: 'failed', error: `refused: ${reason}` });
  });
});
