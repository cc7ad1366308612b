/**
 * What `fxgate diff generations` writes: the table on the terminal (one row per operation and
 * generation, then every field that fails), the JSON report (every operation, every field's
 * verdict) and JUnit XML (one testcase per operation and generation, its failure naming each
 * field with what was expected and what the answer had), for CI.
 */
import {
  FAILING_VERDICTS,
  type FieldProblem,
  type FieldVerdict,
  type ListCheck,
} from '../../gateway/compare/generation-diff.js';
import { textTable } from '../text-table.js';
import type { DiffReport, OperationReport } from './runner.js';

const RESULT_TEXT = { agrees: 'agrees', differs: 'DIFFERS', error: 'ERROR' } as const;

function seconds(ms: number): string {
  return (ms / 1000).toFixed(ms < 10_000 ? 2 : 1);
}

/** A failing field in one line: where, what, expected and actual. */
export function problemLine(problem: FieldProblem): string {
  const parts = [`${problem.path}: ${problem.kind}`];
  if (problem.expected !== undefined) parts.push(`expected ${problem.expected}`);
  if (problem.actual !== undefined) parts.push(`actual ${problem.actual}`);
  const line = parts.join(', ');
  return problem.note ? `${line} (${problem.note})` : line;
}

function failingFields(report: OperationReport): FieldVerdict[] {
  return report.fields.filter((field) => FAILING_VERDICTS.has(field.verdict));
}

function failingLists(report: OperationReport): ListCheck[] {
  return report.lists.filter((check) => !check.ok);
}

/** Every reason an operation failed, one line each. */
export function failureLines(report: OperationReport): string[] {
  if (report.error !== undefined) return [report.error];
  const lines: string[] = [];
  for (const field of failingFields(report)) for (const problem of field.problems) lines.push(problemLine(problem));
  for (const check of failingLists(report)) lines.push(`${check.list}: ${check.check}: ${check.detail ?? 'failed'}`);
  return lines;
}

/** The table, a summary line, then what failed (at most `detailLines` lines an operation). */
export function renderTable(report: DiffReport, detailLines = 20): string {
  const out = textTable(
    ['operation', 'generation', 'fields compared', 'fields declared', 'result'],
    report.operations.map((operation) => [
      operation.operation,
      operation.generation,
      operation.fieldsCompared,
      operation.fieldsDeclared,
      RESULT_TEXT[operation.result],
    ]),
    { rule: true },
  );
  const agree = report.operations.filter((operation) => operation.result === 'agrees').length;
  const differ = report.operations.filter((operation) => operation.result === 'differs').length;
  const errors = report.operations.filter((operation) => operation.result === 'error').length;
  out.push(
    '',
    `${report.operations.length} operations against ${report.url}: ${agree} agree, ${differ} differ, ${errors} could not be compared (${seconds(report.durationMs)} s)`,
  );
  const declared = report.operations.flatMap((operation) =>
    operation.fields.filter((field) => field.verdict === 'answer-only').map((field) => ({ operation, field })),
  );
  if (declared.length > 0) {
    out.push('', 'answer only (declared):');
    for (const { operation, field } of declared)
      out.push(`  ${operation.generation} ${operation.operation} ${field.field}: ${field.answerOnly?.reason ?? ''}`);
  }
  for (const operation of report.operations) {
    if (operation.result === 'agrees') continue;
    const lines = failureLines(operation);
    out.push('', `${operation.generation} ${operation.operation} ${RESULT_TEXT[operation.result]}:`);
    for (const text of lines.slice(0, detailLines)) out.push(`  ${text}`);
    if (lines.length > detailLines) out.push(`  ... and ${lines.length - detailLines} more (see --json)`);
  }
  return out.join('\n');
}

/** The JSON report: the run, then every operation with every field's verdict. */
export function renderJson(report: DiffReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** XML text: escaped, and without the characters XML 1.0 cannot hold. */
function xml(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex
      .replaceAll(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '\uFFFD')
      .replaceAll('&', '&amp;')
      .replaceAll('<', '&lt;')
      .replaceAll('>', '&gt;')
      .replaceAll('"', '&quot;')
      .replaceAll("'", '&apos;')
  );
}

/** JUnit XML: a testsuite per generation, a testcase per operation; a failure names each field. */
export function renderJunit(report: DiffReport): string {
  const out = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const count = (operations: readonly OperationReport[], result: string) =>
    operations.filter((operation) => operation.result === result).length;
  const time = (operations: readonly OperationReport[]) =>
    seconds(operations.reduce((sum, operation) => sum + operation.durationMs, 0));
  out.push(
    `<testsuites name="fxgate diff generations" tests="${report.operations.length}" failures="${count(report.operations, 'differs')}" errors="${count(report.operations, 'error')}" time="${seconds(report.durationMs)}">`,
  );
  const generations = [...new Set(report.operations.map((operation) => operation.generation))];
  for (const generation of generations) {
    const operations = report.operations.filter((operation) => operation.generation === generation);
    out.push(
      `  <testsuite name="${xml(`fxgate diff generations ${generation}`)}" tests="${operations.length}" failures="${count(operations, 'differs')}" errors="${count(operations, 'error')}" time="${time(operations)}" timestamp="${xml(report.startedAt)}">`,
    );
    for (const operation of operations) {
      const head = `    <testcase classname="${xml(`fxgate.diff.${generation}`)}" name="${xml(operation.operation)}" time="${seconds(operation.durationMs)}"`;
      if (operation.result === 'agrees') {
        out.push(`${head}/>`);
        continue;
      }
      const lines = failureLines(operation);
      const tag = operation.result === 'error' ? 'error' : 'failure';
      const message =
        operation.result === 'error'
          ? operation.error!
          : `${failingFields(operation).length + failingLists(operation).length} of the answer's fields or lists differ from v3`;
      out.push(
        `${head}>`,
        `      <${tag} message="${xml(message)}" type="${operation.result}">${xml(lines.join('\n'))}</${tag}>`,
        '    </testcase>',
      );
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>', '');
  return out.join('\n');
}
