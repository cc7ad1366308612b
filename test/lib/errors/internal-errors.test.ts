/**
 * The registry of internal errors (src/lib/errors/internal-errors.ts): every code registered once
 * with its reason and fix, claimed by exactly one class; every error class of src defined there
 * (but the API's refusals, which carry client-facing codes); and the operator manual's table
 * (docs/operations.md#internal-error-codes) the registry as it is. Reads files only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import * as registry from '../../../src/lib/errors/internal-errors.js';
import { FxgateError, INTERNAL_ERRORS, type InternalErrorCode } from '../../../src/lib/errors/internal-errors.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const REGISTRY = 'src/lib/errors/internal-errors.ts';
const SOURCE = readFileSync(join(ROOT, REGISTRY), 'utf8');

/**
 * Error classes that stay where they are: they carry a client-facing error (a v3 catalog code or
 * v3's own envelope), not an internal code.
 */
const API_ERROR_CLASSES: Readonly<Record<string, string>> = {
  ApiError: 'src/lib/errors/api-error.ts',
  V3ClientError: 'src/lib/client/client.ts',
  GatewayRefusal: 'src/gateway/legacy/pipeline/failure.ts',
  V3Refusal: 'src/gateway/legacy/pipeline/failure.ts',
};

interface ClassBlock {
  readonly name: string;
  readonly abstract: boolean;
  readonly base: string;
  /** The code a `withCode('FXGATE_X')` base gives, if the class has one. */
  readonly headingCode: string | undefined;
  readonly body: string;
}

function classBlocks(source: string): ClassBlock[] {
  const heads = [
    ...source.matchAll(/^export (abstract )?class (\w+)(?:<[^>]*>)? extends (\w+)(?:\(\s*'(FXGATE_\w+)',?\s*\))?/gm),
  ];
  return heads.map((head, i) => ({
    name: head[2]!,
    abstract: head[1] !== undefined,
    base: head[3]!,
    headingCode: head[4],
    body: source.slice(head.index, heads[i + 1]?.index ?? source.length),
  }));
}

/** The codes of a `type X = Extract<InternalErrorCode, 'A' | 'B'>` alias. */
function aliasCodes(alias: string): string[] {
  const match = new RegExp(`export type ${alias} = Extract<\\s*InternalErrorCode,([^>]*)>`).exec(SOURCE);
  if (match === null) throw new Error(`${alias} is not an Extract of InternalErrorCode in ${REGISTRY}`);
  return [...match[1]!.matchAll(/'(FXGATE_\w+)'/g)].map((m) => m[1]!);
}

/** The codes a concrete class's instances can have: its heading's, its `code` initializer, or its code parameter's alias. */
function codesOf(block: ClassBlock): string[] {
  if (block.headingCode !== undefined) return [block.headingCode];
  const initialized = /readonly code(?:\s*:[^=;]+)?\s*=\s*'(FXGATE_\w+)'/.exec(block.body);
  if (initialized !== null) return [initialized[1]!];
  const parameter = /readonly code: (\w+),/.exec(block.body);
  if (parameter !== null) return aliasCodes(parameter[1]!);
  return [];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const blocks = classBlocks(SOURCE);
const classNames = new Set(blocks.map((block) => block.name));

describe('the internal error registry', () => {
  it('registers every code once, as FXGATE_*, with a one-line reason and a fix', () => {
    for (const [code, { reason, fix }] of Object.entries(INTERNAL_ERRORS)) {
      expect(code).toMatch(/^FXGATE_[A-Z0-9_]+$/);
      expect(reason, code).toMatch(/^[^\n]{10,120}$/);
      expect(fix, code).toMatch(/^[^\n]{5,120}$/);
    }
  });

  it('has every class claim its own codes, and every code claimed by one class', () => {
    const claimed = new Map<string, string>();
    for (const block of blocks.filter((b) => !b.abstract)) {
      const codes = codesOf(block);
      expect(codes, `${block.name} has no FXGATE_* code`).not.toHaveLength(0);
      for (const code of codes) {
        expect(claimed.get(code), `${code} is claimed by ${claimed.get(code)} and ${block.name}`).toBeUndefined();
        claimed.set(code, block.name);
      }
    }
    expect([...claimed.keys()].sort()).toEqual(Object.keys(INTERNAL_ERRORS).sort());
  });

  it('derives every class from FxgateError and exports it', () => {
    for (const block of blocks.filter((b) => b.name !== 'FxgateError')) {
      const base = block.headingCode === undefined ? block.base : 'FxgateError';
      expect(base === 'FxgateError' || classNames.has(base), `${block.name} extends ${block.base}`).toBe(true);
      if (block.headingCode !== undefined) expect(block.base, block.name).toBe('withCode');
      const exported = (registry as Record<string, unknown>)[block.name];
      expect(typeof exported, block.name).toBe('function');
      expect((exported as { prototype: unknown }).prototype instanceof FxgateError, block.name).toBe(true);
    }
  });

  it('holds every error class of src but the API refusals', () => {
    const errorBase = new RegExp(
      `\\bclass (\\w+)(?:<[^>]*>)? extends (?:Error|TypeError|RangeError|withCode|${[...classNames].join('|')})\\b`,
      'g',
    );
    const outside: string[] = [];
    for (const file of sourceFiles('src').filter((f) => f !== REGISTRY)) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const match of text.matchAll(errorBase)) {
        if (API_ERROR_CLASSES[match[1]!] === file) continue;
        outside.push(`${file}: ${match[1]}`);
      }
      if (/readonly code(?:\s*:[^=;]+)?\s*=\s*'FXGATE_/.test(text)) outside.push(`${file}: an FXGATE_ code`);
    }
    expect(outside).toEqual([]);
  });

  it('is listed as it is in the operator manual', () => {
    const manual = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const section = /^## Internal error codes\n([\s\S]*?)(?=^## )/m.exec(manual);
    expect(section, 'docs/operations.md has no "## Internal error codes" section').not.toBeNull();
    const listed = [...section![1]!.matchAll(/^\| `(FXGATE_\w+)` \| (.+) \| (.+) \|$/gm)].map((m) => ({
      code: m[1]!,
      reason: m[2]!,
      fix: m[3]!,
    }));
    const registered = (Object.keys(INTERNAL_ERRORS) as InternalErrorCode[])
      .sort()
      .map((code) => ({ code, reason: INTERNAL_ERRORS[code].reason, fix: INTERNAL_ERRORS[code].fix }));
    expect(listed).toEqual(registered);
  });

  it('keeps the names and messages the callers and the manual read', () => {
    const error = new registry.ConfigError(['PORT: must be a whole number'], 'advice');
    expect(error).toBeInstanceOf(FxgateError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ConfigError');
    expect(error.message).toBe('invalid configuration:\n  - PORT: must be a whole number\nadvice');
    expect(registry.internalErrorHelp(error)).toBe(INTERNAL_ERRORS.FXGATE_CONFIG_INVALID);
  });

  it('gives a class the code of its withCode heading, and its own name', () => {
    const error = new registry.TracingConfigError('OTEL_EXPORTER_OTLP_ENDPOINT: not a URL');
    expect(error).toBeInstanceOf(FxgateError);
    expect(error.code).toBe('FXGATE_TRACING_CONFIG_INVALID');
    expect(error.name).toBe('TracingConfigError');
    expect(error.message).toBe('OTEL_EXPORTER_OTLP_ENDPOINT: not a URL');
    expect(new registry.StoreUnavailableError('down').code).toBe('FXGATE_STORE_UNAVAILABLE');
  });
});
