/**
 * Where the end-to-end harnesses record the answers they held against the OpenAPI documents
 * (openapi-responses.ts), one JSON line per answer, one file per test process, in a folder made
 * for the run by openapi-recordings-setup.ts; test/openapi-coverage.test.ts reads them all once
 * every other suite has run.
 */
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The environment variable naming the run's folder; set by the global setup, inherited by the test processes. */
export const RECORDINGS_ENV = 'FXGATE_OPENAPI_RECORDINGS';

/** One answer of a documented operation: `v3 POST /v3/fx/trades 200`. */
export interface RecordedAnswer {
  readonly generation: 'v3' | 'v2' | 'v1';
  readonly method: string;
  /** The document's path template. */
  readonly path: string;
  readonly status: number;
}

export function recordingsFolder(): string | undefined {
  return process.env[RECORDINGS_ENV];
}

/** Appends one answer to this process's file; nothing when the run records nothing. */
export function recordAnswer(answer: RecordedAnswer): void {
  const folder = recordingsFolder();
  if (folder === undefined) return;
  appendFileSync(join(folder, `${process.pid}.jsonl`), `${JSON.stringify(answer)}\n`);
}

/** Every answer recorded in the folder, by every process. */
export function readRecordedAnswers(folder: string): RecordedAnswer[] {
  return readdirSync(folder)
    .filter((name) => name.endsWith('.jsonl'))
    .flatMap((name) => readFileSync(join(folder, name), 'utf8').split('\n'))
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as RecordedAnswer);
}
