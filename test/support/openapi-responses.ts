/**
 * Every answer the end-to-end harnesses see (V3Harness on the core, LegacyHarness on the gateway
 * in front of it), held against the OpenAPI document of its generation: the status must be one
 * the operation documents, the body must validate against its schema (ajv, JSON Schema
 * 2020-12), and the headers the document requires must be there. A harness keeps what it saw in
 * a ResponseLog, at no cost to the request's own timing, and checks it all when it closes: a
 * mismatch fails the suite that made the request, naming it. Each answer of a documented
 * operation is also recorded, so the suite-level check (test/openapi-coverage.test.ts) can fail
 * when an operation was never exercised.
 *
 * The documents are generated from the code in this process, once, exactly as the CLI writes
 * them; answers to paths no document has (test-only operations, unknown paths) are not checked.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { oas31 } from 'zod-openapi';

import { generateDocuments } from '../../src/cli/commands/openapi.js';
import type { Generation, OpenApiDocument } from '../../src/lib/openapi/document.js';
import { recordAnswer } from './openapi-recordings.js';

export interface SeenResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
}

export class UndocumentedResponseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UndocumentedResponseError';
  }
}

interface Route {
  readonly template: string;
  readonly pattern: RegExp;
}

interface DocumentChecker {
  readonly generation: Generation;
  readonly document: OpenApiDocument;
  readonly routes: readonly Route[];
  readonly ajv: Ajv2020;
  readonly validators: Map<string, ValidateFunction>;
}

const METHODS = ['get', 'post', 'delete', 'put', 'patch'] as const;

/** The documents of the three generations, generated once per process, as `fxgate openapi` writes them. */
export async function generatedDocuments(): Promise<Readonly<Record<Generation, OpenApiDocument>>> {
  documents ??= generateDocuments();
  return documents;
}
let documents: Promise<Readonly<Record<Generation, OpenApiDocument>>> | null = null;

function checkerOf(generation: Generation, document: OpenApiDocument): DocumentChecker {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats.default(ajv);
  // OpenAPI's own keywords beside JSON Schema's, and the document's top level around its schemas.
  ajv.addVocabulary(['example', 'openapi', 'info', 'servers', 'tags', 'paths', 'components']);
  ajv.addSchema(document, generation);
  // Fewest parameters first, as the router prefers a static segment: `trade/reverse` before `trade/{id}`.
  const routes = Object.keys(document.paths ?? {})
    .map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[A-Za-z0-9_]+\}/g, '[^/]+')}$`),
    }))
    .sort((a, b) => a.template.split('{').length - b.template.split('{').length);
  return { generation, document, routes, ajv, validators: new Map() };
}

const checkers = new Map<Generation, DocumentChecker>();

async function checkerFor(generation: Generation): Promise<DocumentChecker> {
  let checker = checkers.get(generation);
  if (checker === undefined) {
    checker = checkerOf(generation, (await generatedDocuments())[generation]);
    checkers.set(generation, checker);
  }
  return checker;
}

function generationOf(path: string): Generation | null {
  const match = /^\/(v1|v2|v3)\//.exec(path);
  return match ? (match[1] as Generation) : null;
}

/** JSON pointer escaping (RFC 6901). */
const pointer = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

function resolve<T>(document: OpenApiDocument, value: T | { $ref: string }): T {
  if (typeof value === 'object' && value !== null && '$ref' in value) {
    const path = value.$ref
      .replace(/^#\//, '')
      .split('/')
      .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
    return path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], document) as T;
  }
  return value as T;
}

/**
 * Holds one answer of a server serving these generations against its generation's document;
 * throws UndocumentedResponseError naming the operation, the status and every schema error.
 * Answers outside the documents pass.
 */
export async function checkDocumentedResponse(
  serves: readonly Generation[],
  method: string,
  pathAndQuery: string,
  response: SeenResponse,
): Promise<void> {
  const path = pathAndQuery.split('?', 1)[0]!;
  const generation = generationOf(path);
  const verb = method.toLowerCase() as (typeof METHODS)[number];
  if (generation === null || !serves.includes(generation) || !METHODS.includes(verb)) return;
  const checker = await checkerFor(generation);
  const route = checker.routes.find((candidate) => candidate.pattern.test(path));
  const operation = route && checker.document.paths?.[route.template]?.[verb];
  if (route === undefined || operation === undefined) return;
  const where = `${method} ${route.template} (${generation})`;
  const documented = operation.responses?.[String(response.status)];
  if (documented === undefined) {
    throw new UndocumentedResponseError(
      `${where} answered ${response.status}, which its document does not list (it lists ${Object.keys(operation.responses ?? {}).join(', ')}): ${response.text.slice(0, 300)}`,
    );
  }
  const declared = resolve<oas31.ResponseObject>(checker.document, documented);
  for (const [name, header] of Object.entries(declared.headers ?? {})) {
    if (
      resolve<oas31.HeaderObject>(checker.document, header).required &&
      response.headers[name.toLowerCase()] === undefined
    ) {
      throw new UndocumentedResponseError(`${where} answered ${response.status} without its required ${name} header`);
    }
  }
  if (declared.content?.['application/json'] !== undefined) {
    const key = `${route.template} ${verb} ${response.status}`;
    let validate = checker.validators.get(key);
    if (validate === undefined) {
      validate = checker.ajv.compile({
        $ref: `${generation}#/paths/${pointer(route.template)}/${verb}/responses/${response.status}/content/application~1json/schema`,
      });
      checker.validators.set(key, validate);
    }
    let body: unknown;
    try {
      body = JSON.parse(response.text);
    } catch {
      throw new UndocumentedResponseError(
        `${where} answered ${response.status} with a body that is not JSON: ${response.text.slice(0, 300)}`,
      );
    }
    if (!validate(body)) {
      const errors = (validate.errors ?? []).map(
        (error) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`,
      );
      throw new UndocumentedResponseError(
        `${where} answered ${response.status} with a body its document does not describe:\n  ${errors.join('\n  ')}\nbody: ${response.text.slice(0, 600)}`,
      );
    }
  }
  recordAnswer({ generation, method: method.toUpperCase(), path: route.template, status: response.status });
}

interface LoggedAnswer {
  readonly method: string;
  readonly pathAndQuery: string;
  readonly response: SeenResponse;
}

/** What one harness saw, checked when it closes (a timing a test measures never pays for the check). */
export class ResponseLog {
  private readonly answers: LoggedAnswer[] = [];

  constructor(private readonly serves: readonly Generation[]) {}

  add(method: string, pathAndQuery: string, response: SeenResponse): void {
    this.answers.push({ method, pathAndQuery, response });
  }

  /** Checks every answer seen so far; throws one UndocumentedResponseError naming each mismatch. */
  async verify(): Promise<void> {
    const problems: string[] = [];
    for (const { method, pathAndQuery, response } of this.answers.splice(0)) {
      try {
        await checkDocumentedResponse(this.serves, method, pathAndQuery, response);
      } catch (error) {
        if (!(error instanceof UndocumentedResponseError)) throw error;
        problems.push(error.message);
      }
    }
    if (problems.length > 0)
      throw new UndocumentedResponseError(
        `${problems.length} answer(s) its OpenAPI document does not describe:\n- ${problems.join('\n- ')}`,
      );
  }
}
