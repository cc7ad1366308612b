/**
 * What a command has opened, closed in reverse order: on a clean shutdown, and equally when
 * start-up fails half-way, so that a failed start never leaves a port, a pool or a lock behind.
 */
export class Closers {
  private readonly stack: Array<{ readonly name: string; readonly close: () => Promise<void> }> = [];

  add(name: string, close: () => Promise<void>): void {
    this.stack.push({ name, close });
  }

  /** Closes everything, newest first, even when one fails; then throws the failures together. */
  async closeAll(): Promise<void> {
    const failures: Error[] = [];
    for (const { name, close } of this.stack.splice(0).reverse()) {
      try {
        await close();
      } catch (error) {
        failures.push(
          new Error(`closing ${name} failed: ${error instanceof Error ? error.message : String(error)}`, {
            cause: error,
          }),
        );
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, failures.map((f) => f.message).join('; '));
  }
}
