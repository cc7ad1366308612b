/**
 * What a command has opened, closed in reverse order: on a clean shutdown, and equally when
 * start-up fails half-way, so that a failed start never leaves a port, a pool or a lock behind.
 * Listeners close before anything else, newest first, so that every request they received is
 * answered while the store and the database its handler needs are still open; the admin
 * listener, added before the servers, is the last of them (metrics while the others drain).
 */

interface Closer {
  readonly name: string;
  readonly close: () => Promise<void>;
  /** What it still waits for while it closes (the requests a listener has not answered). */
  readonly waitingFor?: () => readonly string[];
}

export class Closers {
  private readonly listeners: Closer[] = [];
  private readonly resources: Closer[] = [];
  /** Closing: the one closing now first, then those after it. */
  private closing: Closer[] = [];

  /** A resource (a pool, a store, a lock): closed after every listener. */
  add(name: string, close: () => Promise<void>): void {
    this.resources.push({ name, close });
  }

  /** A listener: closed before every resource; `waitingFor` names what its close still waits for. */
  addListener(name: string, close: () => Promise<void>, waitingFor?: () => readonly string[]): void {
    this.listeners.push({ name, close, ...(waitingFor === undefined ? {} : { waitingFor }) });
  }

  /** What is not closed yet, the one closing now first with what it waits for: `gateway server (GET /slow (9.8 s))`. */
  stillOpen(): string[] {
    const pending = [...this.closing, ...[...this.listeners].reverse(), ...[...this.resources].reverse()];
    return pending.map((closer, index) => {
      const waiting = index === 0 && this.closing.length > 0 ? (closer.waitingFor?.() ?? []) : [];
      return waiting.length === 0 ? closer.name : `${closer.name} (${waiting.join(', ')})`;
    });
  }

  /** Closes everything, listeners first, each kind newest first, even when one fails; then throws the failures together. */
  async closeAll(): Promise<void> {
    const failures: Error[] = [];
    const queue = [...this.listeners.splice(0).reverse(), ...this.resources.splice(0).reverse()];
    // A second call while one runs (a stop during a failed start) closes only what came since.
    if (queue.length > 0) this.closing = queue;
    while (queue.length > 0) {
      const { name, close } = queue[0]!;
      try {
        await close();
      } catch (error) {
        failures.push(
          new Error(`closing ${name} failed: ${error instanceof Error ? error.message : String(error)}`, {
            cause: error,
          }),
        );
      }
      queue.shift();
    }
    if (failures.length > 0) throw new AggregateError(failures, failures.map((f) => f.message).join('; '));
  }
}
