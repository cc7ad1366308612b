/**
 * Every operation of every OpenAPI document was exercised by the end-to-end suites, its success
 * answer held against its documented schema: each document describes what the tests prove, not
 * what nobody ran. Runs after every other suite (its own vitest project, groupOrder 1), reading
 * what the harnesses recorded (test/support/openapi-recordings.ts); run alone it has nothing to
 * read, and says so.
 */
import { describe, expect, it } from 'vitest';

import { GENERATIONS } from '../src/lib/openapi/document.js';
import { readRecordedAnswers, RECORDINGS_ENV, recordingsFolder } from './support/openapi-recordings.js';
import { generatedDocuments } from './support/openapi-responses.js';

const METHODS = ['get', 'post', 'delete', 'put', 'patch'] as const;

describe('the end-to-end suites against the OpenAPI documents', () => {
  it('answered every documented operation with a documented success at least once', async () => {
    const folder = recordingsFolder();
    expect(
      folder,
      `${RECORDINGS_ENV} is unset: this check reads what the whole suite recorded; run it with the others (npx vitest run)`,
    ).toBeDefined();
    const answers = readRecordedAnswers(folder!);
    expect(
      answers.length,
      'no answer was recorded: run the whole suite (npx vitest run), not this file alone',
    ).toBeGreaterThan(0);
    const succeeded = new Set(
      answers
        .filter((answer) => answer.status >= 200 && answer.status < 300)
        .map((answer) => `${answer.generation} ${answer.method} ${answer.path}`),
    );
    const documents = await generatedDocuments();
    const never = GENERATIONS.flatMap((generation) =>
      Object.entries(documents[generation].paths ?? {}).flatMap(([path, item]) =>
        METHODS.filter((method) => item[method] !== undefined)
          .map((method) => `${generation} ${method.toUpperCase()} ${path}`)
          .filter((operation) => !succeeded.has(operation)),
      ),
    );
    expect(
      never,
      'documented operations no end-to-end test answered with a success (through V3Harness or LegacyHarness)',
    ).toEqual([]);
  });
});
