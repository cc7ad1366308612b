/**
 * `fxgate diff report --url ADMIN_URL [--json]`: what the shadow mode has compared so far, read
 * from a gateway's admin listener (`GET /admin/shadow/report`), with FXGATE_ADMIN_TOKEN (or the
 * one in FXGATE_ADMIN_TOKEN_FILE) as its bearer token when the environment has one. Printed as
 * one row per legacy operation (compared, differing, not compared, dropped), then each differing
 * field with its count and newest example (masked as stored), then the noise; or, with --json,
 * as served.
 */
import { request } from 'undici';
import { z } from 'zod';

import { configuredAdminToken } from '../../lib/config.js';
import { SHADOW_REPORT_PATH } from '../definitions/diff.js';
import { CliError, messageOf } from '../exit.js';
import type { CliRun } from '../io.js';
import { textTable } from '../text-table.js';

/** The most the admin listener may take to answer. */
const FETCH_TIMEOUT_MS = 10_000;
export { SHADOW_REPORT_PATH };

const exampleSchema = z.object({ at: z.string().optional(), legacy: z.string(), gateway: z.string() });
const reportSchema = z.object({
  since: z.string().nullable(),
  operations: z.array(
    z.object({
      generation: z.string(),
      operation: z.string(),
      compared: z.number(),
      differing: z.number(),
      notCompared: z.number(),
      dropped: z.number().optional(),
      fields: z.array(z.object({ path: z.string(), count: z.number(), example: exampleSchema.nullable() })),
      noise: z.array(z.object({ path: z.string(), count: z.number() })),
    }),
  ),
});

/** What the table needs of the report (the admin listener serves more: every example, when each was seen). */
export interface PrintedReport {
  readonly since: string | null;
  readonly operations: readonly {
    readonly generation: string;
    readonly operation: string;
    readonly compared: number;
    readonly differing: number;
    readonly notCompared: number;
    readonly dropped?: number | undefined;
    readonly fields: readonly {
      readonly path: string;
      readonly count: number;
      readonly example: { readonly legacy: string; readonly gateway: string } | null;
    }[];
    readonly noise: readonly { readonly path: string; readonly count: number }[];
  }[];
}

export function formatShadowReport(report: PrintedReport): string {
  if (report.operations.length === 0) return 'No reads compared yet.';
  const lines = [`Shadow report since ${report.since ?? '(unknown)'}`, ''];
  lines.push(
    ...textTable(
      ['GENERATION', 'OPERATION', 'COMPARED', 'DIFFERING', 'NOT COMPARED', 'DROPPED'],
      report.operations.map((operation) => [
        operation.generation,
        operation.operation,
        operation.compared,
        operation.differing,
        operation.notCompared,
        operation.dropped ?? 0,
      ]),
    ),
  );
  const fields = report.operations.flatMap((operation) =>
    operation.fields.map(
      (field) =>
        [
          `${operation.generation} ${operation.operation}`,
          field.path,
          field.count,
          field.example?.legacy ?? '',
          field.example?.gateway ?? '',
        ] as const,
    ),
  );
  lines.push('');
  if (fields.length === 0) lines.push('No differing fields.');
  else
    lines.push(
      'Differing fields (newest example):',
      '',
      ...textTable(['OPERATION', 'FIELD', 'COUNT', 'LEGACY', 'GATEWAY'], fields),
    );
  const noise = report.operations.flatMap((operation) =>
    operation.noise.map(
      (entry) => [`${operation.generation} ${operation.operation}`, entry.path, entry.count] as const,
    ),
  );
  if (noise.length > 0)
    lines.push(
      '',
      'Noise (volatile fields: declared in mappings/, or seen to move between two translations of one request; not differences):',
      '',
      ...textTable(['OPERATION', 'FIELD', 'COUNT'], noise),
    );
  return lines.join('\n');
}

/** The report the admin listener at `adminUrl` serves; `token` (FXGATE_ADMIN_TOKEN) goes as its bearer token when given. */
export async function fetchShadowReport(
  adminUrl: string,
  token?: string,
): Promise<{ raw: unknown; report: PrintedReport }> {
  const url = new URL(SHADOW_REPORT_PATH, adminUrl).toString();
  let status: number;
  let text: string;
  try {
    const response = await request(url, {
      ...(token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } }),
      headersTimeout: FETCH_TIMEOUT_MS,
      bodyTimeout: FETCH_TIMEOUT_MS,
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    status = response.statusCode;
    text = await response.body.text();
  } catch (error) {
    throw new CliError(`cannot read ${url}: ${messageOf(error)}`, undefined, { cause: error });
  }
  if (status === 404)
    throw new CliError(
      `${url} answered 404: point --url at the gateway's admin listener (FXGATE_ADMIN_HOST:FXGATE_ADMIN_PORT), not its public one`,
    );
  if (status === 401)
    throw new CliError(
      token === undefined
        ? `${url} answered 401: the admin listener has a token; set FXGATE_ADMIN_TOKEN to it`
        : `${url} answered 401: FXGATE_ADMIN_TOKEN is not the admin listener's token`,
    );
  if (status !== 200) throw new CliError(`${url} answered ${status}: ${text.slice(0, 300)}`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new CliError(`${url} answered something that is not JSON: ${text.slice(0, 300)}`);
  }
  const parsed = reportSchema.safeParse(raw);
  if (!parsed.success)
    throw new CliError(`${url} answered JSON that is not a shadow report: ${parsed.error.issues[0]?.message ?? ''}`);
  return { raw, report: parsed.data };
}

/** `fxgate diff report` (declared in definitions/diff.ts): the report fetched and printed as a table, or as JSON. */
export async function printShadowReport(
  run: CliRun,
  options: { readonly url: string; readonly json?: boolean },
): Promise<void> {
  const { raw, report } = await fetchShadowReport(options.url, configuredAdminToken(run.config()));
  run.out(options.json ? JSON.stringify(raw, null, 2) : formatShadowReport(report));
}
