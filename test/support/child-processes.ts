/**
 * What the throwaway servers do with the child process they start: keep the end of its output to
 * say why it failed, tell whether it has ended, and stop it (SIGTERM, then SIGKILL).
 */
import type { ChildProcess } from 'node:child_process';

/** Enough of a server's output to say why it failed to start. */
const OUTPUT_LIMIT = 4_000;
const STOP_GRACE_MS = 10_000;

/** The child's output so far, its last OUTPUT_LIMIT characters; a failed spawn (an 'error' event, which must be handled) included. */
export function captureOutput(child: ChildProcess): () => string {
  let text = '';
  const append = (chunk: Buffer | string): void => {
    text = (text + chunk.toString()).slice(-OUTPUT_LIMIT);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  child.on('error', (error) => append(`\n${error.message}`));
  return () => text.trim();
}

export function hasEnded(child: ChildProcess): boolean {
  return child.pid === undefined || child.exitCode !== null || child.signalCode !== null;
}

/** SIGTERM, then SIGKILL if it has not exited within the grace period; resolves once it has exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (hasEnded(child)) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}
