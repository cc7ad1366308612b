/**
 * `fxgate diff report --url ADMIN_URL [--json]`: what the shadow mode has compared so far, read
 * from a gateway's admin listener (`GET /admin/shadow/report`), with FXGATE_ADMIN_TOKEN (or the
 * one in FXGATE_ADMIN_TOKEN_FILE) as its bearer token when the environment has one. Printed as
 * one row per legacy operation (compared, differing, not compared, dropped), then each differing
 * field with its count and newest example (masked as stored), then the noise; or, with --json,
 * as served.
 */
import { z } from 'zod';

import { configuredAdminToken } from '../../lib/config.js';
import { CliError } from '../../lib/errors/internal-errors.js';
import { fetchAdminJson } from '../admin-client.js';
import type { CliRun } from '../io.js';
import { textTable } from '../text-table.js';
import { SHADOW_REPORT_PATH } from './diff-options.js';

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
  const raw = await fetchAdminJson(adminUrl, SHADOW_REPORT_PATH, token);
  const parsed = reportSchema.safeParse(raw);
  if (!parsed.success)
    throw new CliError(
      `${new URL(SHADOW_REPORT_PATH, adminUrl).toString()} answered JSON that is not a shadow report: ${parsed.error.issues[0]?.message ?? ''}`,
    );
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
