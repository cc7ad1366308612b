/**
 * `fxgate schedule [--url ADMIN_URL] [--json] [--from-env]`: the migration schedule of v1 and
 * v2 (deprecation, sunset, brownouts, exempt orgs, shadow mode, cut-over orgs) with how far off
 * each instant is. By default it asks a running gateway (`GET /admin/schedule` on its admin
 * listener, with FXGATE_ADMIN_TOKEN when the environment has one): the running process is the
 * truth, its settings may differ from this shell's. `--from-env` works it out from this
 * environment's settings instead, as a gateway started here would apply them, for checking a
 * configuration before deploying it. It prints the lines the gateway prints at start-up, or with
 * --json what the admin route serves. Reads the admin listener or the environment; writes nothing.
 * Declared in definitions/schedule.ts.
 */
import { SCHEDULE_ADMIN_PATH } from '../../gateway/app.js';
import { GenerationLifecycle, lifecycleOptionsFromConfig } from '../../gateway/legacy/runtime/generation-lifecycle.js';
import {
  type MigrationSchedule,
  migrationSchedule,
  migrationScheduleSchema,
  scheduleLines,
} from '../../gateway/migration-schedule.js';
import { shadowSettings } from '../../gateway/shadow/shadow-mode.js';
import { type Config, configuredAdminToken } from '../../lib/config.js';
import { CliError } from '../../lib/errors/internal-errors.js';
import { fetchAdminJson } from '../admin-client.js';
import { usageError } from '../exit.js';
import type { CliRun } from '../io.js';
import { loopbackUrlOf } from '../serve.js';
import { adminPort, shadowOptions } from '../servers.js';

/**
 * The admin listener this environment's settings name, as a client on this host reaches it:
 * FXGATE_ADMIN_HOST (a wildcard over loopback) on FXGATE_ADMIN_PORT, or PORT+1 as under `fxgate all`.
 */
export function configuredAdminUrl(config: Config): string {
  const port = adminPort(config, 'all');
  if (port === null || port === 0)
    throw usageError(
      `this environment names no admin listener to ask (FXGATE_ADMIN_PORT is ${config.FXGATE_ADMIN_PORT ?? `unset and PORT is ${config.PORT}`}): pass --url with the gateway's admin listener, e.g. --url http://127.0.0.1:8081, or --from-env`,
    );
  const host = config.FXGATE_ADMIN_HOST;
  const url = host.includes(':') && !host.startsWith('[') ? `http://[${host}]:${port}` : `http://${host}:${port}`;
  return loopbackUrlOf(url) ?? url;
}

/** The schedule a gateway started with this configuration would apply at `now`: the same plans, read the same way. */
export function scheduleFromConfig(config: Config, now: number): MigrationSchedule {
  const lifecycle = new GenerationLifecycle(lifecycleOptionsFromConfig(config));
  const shadow = shadowOptions(config);
  return migrationSchedule(
    {
      plans: lifecycle.plans,
      migrationUrl: lifecycle.migrationUrl,
      shadow: shadow === undefined ? null : shadowSettings(shadow),
    },
    now,
  );
}

/** The schedule a running gateway's admin listener serves, checked. */
export async function fetchSchedule(adminUrl: string, token?: string): Promise<MigrationSchedule> {
  const raw = await fetchAdminJson(adminUrl, SCHEDULE_ADMIN_PATH, token);
  const parsed = migrationScheduleSchema.safeParse(raw);
  if (!parsed.success)
    throw new CliError(
      `${new URL(SCHEDULE_ADMIN_PATH, adminUrl).toString()} answered JSON that is not a migration schedule (another version of fxgate?): ${parsed.error.issues[0]?.message ?? ''}`,
    );
  return parsed.data;
}

export interface ScheduleOptions {
  readonly url?: string;
  readonly json?: boolean;
  readonly fromEnv?: boolean;
}

/** Prints the schedule as the options ask (declared in definitions/schedule.ts). */
export async function runScheduleCommand(run: CliRun, options: ScheduleOptions): Promise<void> {
  const config = run.config();
  if (options.fromEnv === true && options.url !== undefined)
    throw usageError('--from-env asks no process: pass either --url or --from-env');
  const adminUrl = options.fromEnv === true ? null : (options.url ?? configuredAdminUrl(config));
  const schedule =
    adminUrl === null
      ? scheduleFromConfig(config, run.now())
      : await fetchSchedule(adminUrl, configuredAdminToken(config));
  if (options.json === true) {
    run.out(JSON.stringify(schedule, null, 2));
    return;
  }
  const source =
    adminUrl === null ? "from this environment's settings (--from-env)" : `from the gateway at ${adminUrl}`;
  run.out(`Migration schedule at ${schedule.now}, ${source}:`);
  for (const line of scheduleLines(schedule)) run.out(`  ${line}`);
}
