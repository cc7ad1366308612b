/**
 * `fxgate usage`'s reads of the legacy usage report and of the readiness report as state
 * operations, so that they too run through the admin listener of a server that holds the
 * embedded data folder.
 */
import { z } from 'zod';

import { LEGACY_GENERATIONS } from '../../gateway/legacy/declarations/legacy-operations.js';
import { type ReadinessQuery, type ReadinessReport, readReadiness } from '../../gateway/usage/readiness-recorder.js';
import { readUsage, type UsageQuery, type UsageReport } from '../../gateway/usage/usage-recorder.js';
import { defineOperation } from './operation.js';

export const usageReportOperation = defineOperation({
  name: 'usage/report',
  input: z.object({ generation: z.string().optional(), since: z.number().optional() }) satisfies z.ZodType<UsageQuery>,
  // JSON already (ISO 8601 times, counts as numbers), as GET /admin/usage serves it: it passes as it is.
  output: z.custom<UsageReport>(
    (value) => typeof value === 'object' && value !== null && Array.isArray((value as { rows?: unknown }).rows),
  ),
  run: ({ db }, query) => readUsage(db, query),
});

export const readinessReportOperation = defineOperation({
  name: 'usage/readiness',
  input: z.object({
    generation: z.enum(LEGACY_GENERATIONS as [ReadinessQuery['generation'], ...ReadinessQuery['generation'][]]),
    since: z.number().optional(),
  }) satisfies z.ZodType<ReadinessQuery>,
  // JSON already, as GET /admin/readiness serves it.
  output: z.custom<ReadinessReport>(
    (value) => typeof value === 'object' && value !== null && Array.isArray((value as { rows?: unknown }).rows),
  ),
  run: ({ db }, query) => readReadiness(db, query),
});
