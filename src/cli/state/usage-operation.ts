/**
 * `fxgate usage`'s read of the legacy usage report as a state operation, so that it too runs
 * through the admin listener of a server that holds the embedded data folder.
 */
import { z } from 'zod';

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
