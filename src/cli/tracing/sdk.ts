/**
 * The OpenTelemetry SDK as fxgate runs it, loaded (with the one exporter chosen) only when
 * tracing is on: start.ts imports this module dynamically, so a process with tracing off never
 * loads it. One tracer provider per process, batching its spans to the exporter; W3C trace
 * context propagation; context carried across awaits by AsyncLocalStorage. The exporters read
 * their own variables (endpoint, headers, timeout, compression), the provider the sampler and
 * limits, the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
 */
import { context, diag, DiagConsoleLogger, DiagLogLevel, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';

import { setTracingActive } from '../../lib/tracing/spans.js';
import type { TracingSettings } from './settings.js';

/** A running SDK: flushed and shut down in the process's drain, after its listeners closed. */
export interface TracingHandle {
  /** Exports every ended span now. */
  forceFlush(): Promise<void>;
  /** Exports what is left, then stops; spans started later are not recorded. */
  shutdown(): Promise<void>;
}

/** Only the exporter chosen is loaded. */
async function createExporter(settings: TracingSettings): Promise<SpanExporter> {
  if (settings.exporter === 'console') return new ConsoleSpanExporter();
  if (settings.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter();
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter();
}

export async function startSdk(settings: TracingSettings, defaultServiceName: string): Promise<TracingHandle> {
  // The SDK's own warnings (an export the collector refused or never answered) go to stderr.
  diag.setLogger(new DiagConsoleLogger(), { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  const exporter = await createExporter(settings);
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override the role's default name.
  const resource = resourceFromAttributes({ 'service.name': defaultServiceName }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracingActive(true);
  let stopped: Promise<void> | null = null;
  return {
    forceFlush: () => provider.forceFlush(),
    shutdown() {
      stopped ??= (async () => {
        setTracingActive(false);
        try {
          // A collector that is down loses the last batch; the process still stops cleanly.
          await provider
            .shutdown()
            .catch((error: unknown) =>
              diag.warn(
                `tracing: the last spans were not exported (${error instanceof Error ? error.message : String(error)})`,
              ),
            );
        } finally {
          // Unregistered, so a later start in the same process (a test) registers afresh.
          trace.disable();
          propagation.disable();
          context.disable();
          diag.disable();
        }
      })();
      return stopped;
    },
  };
}
