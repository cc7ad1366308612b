/**
 * Tracing for a server command (docs/operations.md#tracing): started before anything opens,
 * when the OTEL_* variables turn it on, and shut down last in the drain (closers.ts: the first
 * resource added is the last closed), so the spans of the last requests are exported. A value
 * it cannot run with (a grpc protocol, an unknown exporter) stops the start with a usage error.
 */
import { TracingConfigError } from '../lib/errors/internal-errors.js';
import type { Closers } from './closers.js';
import { usageError } from './exit.js';
import type { CliRun } from './io.js';
import { tracingSettings } from './tracing/settings.js';
import { startTracing, type TracingRole } from './tracing/start.js';

/** Starts tracing as the run's environment says and registers its shutdown; says on stdout where spans go. */
export async function openTracing(run: CliRun, closers: Closers, role: TracingRole): Promise<void> {
  let started;
  try {
    started = await startTracing(run.io.env, role);
  } catch (error) {
    if (error instanceof TracingConfigError) throw usageError(error.message);
    throw error;
  }
  if (started === null) return;
  closers.add('tracing', () => started.shutdown());
  const settings = tracingSettings(run.io.env)!;
  run.out(
    `fxgate ${role}: tracing on: spans ${settings.exporter === 'console' ? 'written to stdout' : `exported over OTLP (${settings.protocol})`} as service ${started.serviceName}`,
  );
}
