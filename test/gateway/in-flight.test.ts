import { request } from 'undici';
import { describe, expect, it } from 'vitest';

import { InFlightRequests } from '../../src/gateway/in-flight.js';
import * as S from './legacy/v3-contract/v3-samples.js';
import { ScriptedGateway } from './scripted-gateway.js';

describe('InFlightRequests', () => {
  it('drain waits for what it tracks, and no longer than its bound', async () => {
    const inFlight = new InFlightRequests();
    let finished = false;
    void inFlight.track(new Promise((resolve) => setTimeout(resolve, 50)).then(() => (finished = true)));
    expect(inFlight.size).toBe(1);
    await inFlight.drain(5_000);
    expect(finished).toBe(true);
    expect(inFlight.size).toBe(0);

    void inFlight.track(new Promise(() => {}));
    const started = Date.now();
    await inFlight.drain(100);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('a failed request is forgotten too', async () => {
    const inFlight = new InFlightRequests();
    await expect(inFlight.track(Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(inFlight.size).toBe(0);
  });
});

describe('gateway shutdown', () => {
  it('a legacy write whose client left finishes its v3 calls before the upstream pool closes', async () => {
    const gw = await ScriptedGateway.start();
    try {
      gw.upstream.answerFor = (sent) => {
        const path = `${sent.method} ${sent.url}`;
        if (path === 'POST /v3/fx/trades')
          return { status: 200, body: JSON.stringify({ data: S.TRADE }), delayMs: 300 };
        return { status: 200, body: JSON.stringify(path === 'GET /v3/fx/exposure' ? S.EXPOSURE : S.BALANCES) };
      };
      const controller = new AbortController();
      const sent = request(`${gw.url}/v1/brokerage/${gw.key.file.orgId}/trade`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.token()}`, 'x-app-mode': 'SANDBOX', 'content-type': 'application/json' },
        body: `{"quoteId":"${S.UUIDS.quote}"}`,
        signal: controller.signal,
      });
      // The client leaves once its trade is at v3 (answered late), so the rest of the write runs without it.
      await expect.poll(() => gw.upstream.requests.length).toBe(1);
      controller.abort();
      await expect(sent).rejects.toThrow();
      await gw.app.close();
      expect(gw.upstream.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
        'POST /v3/fx/trades',
        'GET /v3/fx/balances',
        'GET /v3/fx/exposure',
      ]);
    } finally {
      await gw.close();
    }
  });
});
