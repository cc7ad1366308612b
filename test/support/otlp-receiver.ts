/**
 * An OTLP/HTTP trace receiver on 127.0.0.1 for the tracing tests: it takes what an exporter
 * POSTs to /v1/traces, as http/json (read as JSON) or http/protobuf (decoded with protobufjs
 * from the OTLP trace messages below, a subset of opentelemetry-proto's trace.proto and
 * common.proto with their field numbers), and keeps every span in one plain shape.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import protobuf from 'protobufjs';
import { afterAll, beforeAll } from 'vitest';

import { type StartedTracing, startTracing, type TracingRole } from '../../src/cli/tracing/start.js';

/** The fields the tests read, with opentelemetry-proto's numbers; unknown fields are skipped by the decoder. */
const OTLP_TRACE_PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  repeated Event events = 11;
  Status status = 15;
}
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
`;

const ExportRequest = protobuf.parse(OTLP_TRACE_PROTO).root.lookupType('otlp.ExportTraceServiceRequest');

export type AttributeValue = string | number | boolean | readonly AttributeValue[];

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  /** The W3C tracestate the span carries (continued from its parent). */
  readonly traceState: string;
  readonly name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly events: readonly { readonly name: string; readonly attributes: Readonly<Record<string, AttributeValue>> }[];
  /** 2: error. */
  readonly statusCode: number;
  readonly statusMessage: string;
  readonly scope: string;
  readonly resource: Readonly<Record<string, AttributeValue>>;
}

export const SPAN_KIND = { server: 2, client: 3 } as const;

interface AnyValueLike {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string | { toNumber(): number };
  doubleValue?: number;
  arrayValue?: { values?: AnyValueLike[] };
}
interface KeyValueLike {
  key: string;
  value?: AnyValueLike;
}

function valueOf(value: AnyValueLike | undefined): AttributeValue {
  if (value === undefined) return '';
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) {
    const int = value.intValue;
    return typeof int === 'object' ? int.toNumber() : Number(int);
  }
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return '';
}

function attributesOf(list: KeyValueLike[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map((entry) => [entry.key, valueOf(entry.value)]));
}

/** An id as hex: JSON carries hex already, protobuf bytes. */
function hexOf(id: unknown): string {
  if (id === undefined || id === null) return '';
  if (typeof id === 'string') return id.toLowerCase();
  return Buffer.from(id as Uint8Array).toString('hex');
}

interface RequestLike {
  resourceSpans?: {
    resource?: { attributes?: KeyValueLike[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: {
        traceId?: unknown;
        spanId?: unknown;
        parentSpanId?: unknown;
        traceState?: string;
        name?: string;
        kind?: number;
        attributes?: KeyValueLike[];
        events?: { name?: string; attributes?: KeyValueLike[] }[];
        status?: { code?: number; message?: string };
      }[];
    }[];
  }[];
}

function spansOf(request: RequestLike): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: hexOf(span.traceId),
          spanId: hexOf(span.spanId),
          parentSpanId: hexOf(span.parentSpanId),
          traceState: span.traceState ?? '',
          name: span.name ?? '',
          kind: span.kind ?? 0,
          attributes: attributesOf(span.attributes),
          events: (span.events ?? []).map((event) => ({
            name: event.name ?? '',
            attributes: attributesOf(event.attributes),
          })),
          statusCode: span.status?.code ?? 0,
          statusMessage: span.status?.message ?? '',
          scope: scopeSpans.scope?.name ?? '',
          resource,
        });
      }
    }
  }
  return spans;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** The content types of the exports received, in order. */
  readonly contentTypes: string[] = [];

  private constructor(
    private readonly server: Server,
    readonly endpoint: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    let receiver: OtlpReceiver | null = null;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        const type = String(request.headers['content-type'] ?? '');
        try {
          if (request.method !== 'POST' || request.url !== '/v1/traces')
            throw new Error(`unexpected ${request.method} ${request.url}`);
          const decoded: RequestLike = type.startsWith('application/json')
            ? (JSON.parse(body.toString('utf8')) as RequestLike)
            : (ExportRequest.toObject(ExportRequest.decode(body), { longs: Number, defaults: false }) as RequestLike);
          receiver!.contentTypes.push(type);
          receiver!.spans.push(...spansOf(decoded));
          response.writeHead(200, {
            'content-type': type.startsWith('application/json') ? 'application/json' : 'application/x-protobuf',
          });
          response.end(type.startsWith('application/json') ? '{}' : undefined);
        } catch (error) {
          response.writeHead(400).end(String(error));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    receiver = new OtlpReceiver(server, `http://127.0.0.1:${port}`);
    return receiver;
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A block's tests with tracing on: what they read, once the exporter has sent what was ended. */
export interface TracedTests {
  readonly receiver: OtlpReceiver;
  /** Sends every ended span to the receiver. */
  flush(): Promise<void>;
}

/**
 * Tracing on for the enclosing describe block (or file): a receiver on 127.0.0.1 started and the
 * SDK started towards it over http/json before the tests, both shut down and the environment
 * cleaned after.
 */
export function traceToReceiver(role: TracingRole): TracedTests {
  let receiver: OtlpReceiver | undefined;
  let tracing: StartedTracing | undefined;
  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
    Object.assign(process.env, env);
    tracing = (await startTracing(env, role))!;
  });
  afterAll(async () => {
    await tracing?.shutdown();
    await receiver?.close();
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_PROTOCOL;
  });
  return {
    get receiver() {
      if (receiver === undefined) throw new Error('the receiver starts in beforeAll');
      return receiver;
    },
    flush: async () => tracing?.forceFlush(),
  };
}
