/**
 * tracingSettings: off unless an exporter or an OTLP endpoint is named, the protocol chosen by
 * the traces variable over the general one, and every value fxgate cannot run with refused with
 * a message naming the values it takes.
 */
import { describe, expect, it } from 'vitest';

import { tracingSettings } from '../../../src/cli/tracing/settings.js';
import { TracingConfigError } from '../../../src/lib/errors/internal-errors.js';

describe('tracingSettings', () => {
  it('is off without any variable, with exporter none, and under OTEL_SDK_DISABLED', () => {
    expect(tracingSettings({})).toBeNull();
    expect(
      tracingSettings({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }),
    ).toBeNull();
    expect(tracingSettings({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBeNull();
    // Empty is unset (the specification's rule), and other variables alone turn nothing on.
    expect(
      tracingSettings({ OTEL_TRACES_EXPORTER: '', OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }),
    ).toBeNull();
  });

  it('is on with OTLP over http/protobuf when an endpoint alone is set', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toEqual({
      exporter: 'otlp',
      protocol: 'http/protobuf',
    });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toEqual({
      exporter: 'otlp',
      protocol: 'http/protobuf',
    });
  });

  it('takes the traces protocol over the general one', () => {
    expect(
      tracingSettings({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      }),
    ).toEqual({ exporter: 'otlp', protocol: 'http/json' });
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toMatchObject({
      protocol: 'http/json',
    });
  });

  it('runs the console exporter without reading the protocol', () => {
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'console', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toMatchObject({
      exporter: 'console',
    });
  });

  it('refuses grpc, naming the two protocols it supports', () => {
    for (const name of ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']) {
      const read = () => tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317', [name]: 'grpc' });
      expect(read).toThrow(TracingConfigError);
      expect(read).toThrow(
        `${name}=grpc is not supported: fxgate exports traces over OTLP/HTTP; set it to http/protobuf (the default) or http/json`,
      );
    }
  });

  it('refuses an exporter it does not have, several exporters, and an unknown sampler', () => {
    expect(() => tracingSettings({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(
      'OTEL_TRACES_EXPORTER=zipkin is not supported: set it to one of otlp, console, none',
    );
    expect(() => tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp,console' })).toThrow('names several exporters');
    expect(() => tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(
      'OTEL_TRACES_SAMPLER=sometimes is not supported: set it to one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio',
    );
  });
});
