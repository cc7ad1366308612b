/**
 * Starting tracing for a server process: off (nothing loaded, nothing to close) unless the
 * OTEL_* variables turn it on, else the SDK of sdk.ts, imported only then. The default service
 * name is the process's role; `fxgate all`, one process serving both parts, is one service.
 */
import type { TracingHandle } from './sdk.js';
import { tracingSettings } from './settings.js';

export type TracingRole = 'gateway' | 'core' | 'all';

export const DEFAULT_SERVICE_NAMES: Readonly<Record<TracingRole, string>> = {
  gateway: 'fxgate-gateway',
  core: 'fxgate-core',
  all: 'fxgate',
};

/** A running SDK, and the service name its spans carry. */
export interface StartedTracing extends TracingHandle {
  readonly serviceName: string;
}

/** Starts tracing as env says, or returns null when it is off; throws TracingConfigError on a value it cannot run with. */
export async function startTracing(
  env: Readonly<Record<string, string | undefined>>,
  role: TracingRole,
): Promise<StartedTracing | null> {
  const settings = tracingSettings(env);
  if (settings === null) return null;
  const { startSdk } = await import('./sdk.js');
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || DEFAULT_SERVICE_NAMES[role];
  const handle = await startSdk(settings, DEFAULT_SERVICE_NAMES[role]);
  return { serviceName, forceFlush: () => handle.forceFlush(), shutdown: () => handle.shutdown() };
}
