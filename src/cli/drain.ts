/**
 * A server process's drain (docs/operations.md#stopping-and-rolling-restarts): from a stop
 * signal on (src/cli/serve.ts calls begin), `/readyz` answers 503 (the apps read `draining`)
 * and the answers of the listeners a load balancer sends to carry `Connection: close`, while
 * they go on serving for the drain delay; then the closers close each listener as
 * ListenerDrain does, which the listeners registered here are given to.
 */
import type { FastifyInstance } from 'fastify';

import { ListenerDrain } from '../lib/http/listener-drain.js';
import type { Closers } from './closers.js';

export interface DrainedListener {
  /**
   * A load balancer sends to it: its answers end keep-alive from the signal on. The core of
   * `fxgate all`, which only its gateway reaches, keeps its connections until the gateway has
   * closed.
   */
  readonly balanced: boolean;
}

export class Drain {
  private begun = false;
  private readonly balanced: ListenerDrain[] = [];

  constructor(private readonly closers: Closers) {}

  /** True from the stop signal on: what `/readyz` reads. */
  readonly draining = (): boolean => this.begun;

  /** Registers an app's listener: closed among the listeners (Closers.addListener), without failing a request it received. */
  add(name: string, app: FastifyInstance, options: DrainedListener): void {
    const listener = new ListenerDrain(app.server);
    if (options.balanced) this.balanced.push(listener);
    this.closers.addListener(
      name,
      () => listener.close(() => app.close()),
      () => listener.describeOpen(),
    );
  }

  /** The stop signal: readiness goes, and the balanced listeners' answers end keep-alive. */
  begin(): void {
    if (this.begun) return;
    this.begun = true;
    for (const listener of this.balanced) listener.endKeepAlive();
  }
}
