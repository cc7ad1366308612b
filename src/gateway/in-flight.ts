/**
 * Legacy handlers still running. A legacy operation makes several v3 calls in sequence, and its
 * handler runs on when its client has gone (fastify then no longer counts it as in flight). On
 * shutdown the gateway waits for them, up to a bound, before it closes its upstream pool, so that
 * no handler is cut between a v3 write and the reads or the idempotency record that follow it.
 */
export class InFlightRequests {
  private readonly running = new Set<Promise<unknown>>();

  /** Runs `work` and counts it until it settles; returns its result. */
  track<T>(work: Promise<T>): Promise<T> {
    this.running.add(work);
    const forget = () => this.running.delete(work);
    work.then(forget, forget);
    return work;
  }

  get size(): number {
    return this.running.size;
  }

  /** Resolves when every tracked request has settled, or after `timeoutMs`, whichever is first. */
  async drain(timeoutMs: number): Promise<void> {
    if (this.running.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    await Promise.race([Promise.allSettled([...this.running]), deadline]);
    clearTimeout(timer);
  }
}
