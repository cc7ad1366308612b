/**
 * Whether tracing is on, and how it exports, from the standard OTEL_* variables
 * (docs/operations.md#tracing). Only the choices fxgate makes are read here: on or off, the
 * exporter and the protocol, checked at start so a wrong value stops the process with a message
 * naming the fix. Everything else (endpoint, headers, timeout, sampler argument, resource) the
 * SDK and the exporters read themselves. Pure: it loads nothing, so it costs nothing when off.
 */

import { TracingConfigError } from '../../lib/errors/internal-errors.js';

export type TraceExporterName = 'otlp' | 'console';
export type OtlpProtocol = 'http/protobuf' | 'http/json';

export const TRACE_EXPORTERS = ['otlp', 'console', 'none'] as const;
export const OTLP_PROTOCOLS: readonly OtlpProtocol[] = ['http/protobuf', 'http/json'];
export const DEFAULT_OTLP_PROTOCOL: OtlpProtocol = 'http/protobuf';
export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

export interface TracingSettings {
  readonly exporter: TraceExporterName;
  /** Only for the otlp exporter. */
  readonly protocol: OtlpProtocol;
}

type Env = Readonly<Record<string, string | undefined>>;

/** An unset variable and an empty one are the same (the specification's rule). */
function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/**
 * The exporter and protocol tracing runs with, or null when it is off: off unless
 * OTEL_TRACES_EXPORTER names an exporter or an OTLP endpoint is set, and always off under
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
 */
export function tracingSettings(env: Env): TracingSettings | null {
  if (read(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return null;
  const exporterValue = read(env, 'OTEL_TRACES_EXPORTER')?.toLowerCase();
  const endpoint = read(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? read(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  let exporter: TraceExporterName;
  if (exporterValue === undefined) {
    if (endpoint === undefined) return null;
    exporter = 'otlp';
  } else {
    const names = exporterValue.split(',').map((name) => name.trim());
    const unknown = names.filter((name) => !(TRACE_EXPORTERS as readonly string[]).includes(name));
    if (unknown.length > 0)
      throw new TracingConfigError(
        `OTEL_TRACES_EXPORTER=${exporterValue} is not supported: set it to one of ${TRACE_EXPORTERS.join(', ')} (fxgate exports traces over OTLP/HTTP or to the console)`,
      );
    if (names.length !== 1)
      throw new TracingConfigError(
        `OTEL_TRACES_EXPORTER=${exporterValue} names several exporters: set it to one of ${TRACE_EXPORTERS.join(', ')}`,
      );
    if (names[0] === 'none') return null;
    exporter = names[0] as TraceExporterName;
  }
  const sampler = read(env, 'OTEL_TRACES_SAMPLER')?.toLowerCase();
  if (sampler !== undefined && !(TRACE_SAMPLERS as readonly string[]).includes(sampler))
    throw new TracingConfigError(
      `OTEL_TRACES_SAMPLER=${sampler} is not supported: set it to one of ${TRACE_SAMPLERS.join(', ')} (parentbased_always_on when unset)`,
    );
  return { exporter, protocol: exporter === 'otlp' ? otlpProtocol(env) : DEFAULT_OTLP_PROTOCOL };
}

/** The traces protocol: the traces-specific variable over the general one, http/protobuf when neither is set. */
function otlpProtocol(env: Env): OtlpProtocol {
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const value = read(env, name);
    if (value === undefined) continue;
    if ((OTLP_PROTOCOLS as readonly string[]).includes(value)) return value as OtlpProtocol;
    throw new TracingConfigError(
      `${name}=${value} is not supported: fxgate exports traces over OTLP/HTTP; set it to http/protobuf (the default) or http/json, and point the endpoint at the collector's HTTP port (4318)`,
    );
  }
  return DEFAULT_OTLP_PROTOCOL;
}
