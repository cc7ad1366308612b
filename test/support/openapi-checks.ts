/**
 * The two checks every generated OpenAPI document must pass: validation against the OpenAPI 3.1
 * schema (@seriousme/openapi-schema-validator) and Redocly's lint with the rules of redocly.yaml
 * (recommended; anything turned off is turned off there, with its reason).
 */
import { fileURLToPath } from 'node:url';

import { lintFromString, loadConfig, type NormalizedProblem } from '@redocly/openapi-core';
import { Validator } from '@seriousme/openapi-schema-validator';

import type { OpenApiDocument } from '../../src/lib/openapi/document.js';

const CONFIG_PATH = fileURLToPath(new URL('../../redocly.yaml', import.meta.url));

/** The schema validator's errors; empty when the document is valid OpenAPI 3.1. */
export async function openApiSchemaErrors(document: OpenApiDocument): Promise<string[]> {
  const result = await new Validator().validate(
    structuredClone(document) as unknown as Parameters<Validator['validate']>[0],
  );
  return result.valid
    ? []
    : (Array.isArray(result.errors) ? result.errors : [result.errors]).map((error) => JSON.stringify(error));
}

/** Every problem Redocly's lint finds, errors and warnings, as `severity rule message at pointer`. */
export async function lintProblems(document: OpenApiDocument, name: string): Promise<string[]> {
  const config = await loadConfig({ configPath: CONFIG_PATH });
  const problems: NormalizedProblem[] = await lintFromString({
    source: JSON.stringify(document),
    absoluteRef: `${name}.json`,
    config,
  });
  return problems.map(
    (problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer ?? '?'}`,
  );
}
