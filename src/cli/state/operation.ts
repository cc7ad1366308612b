/**
 * The commands that manage state (`keys`, `orgs`, `accounts`, `webhooks`) each do their work as
 * typed operations: a name, an input schema, an output schema and a `run` on the database. A
 * command runs an operation either on the database it opened itself or, while a running fxgate
 * holds the embedded data folder, through that process's admin listener (session.ts), whose
 * route runs the same `run` (admin-access.ts). One implementation, two ways to reach it.
 *
 * The output schema is a codec: the server encodes the result to JSON and the CLI decodes it
 * (dates, decimals). The direct path does the same round trip, so both print from equal values.
 */
import { z } from 'zod';

import { MODES } from '../../lib/auth/credential-vocabulary.js';
import type { Config } from '../../lib/config.js';
import type { Database } from '../../lib/db/database.js';
import type { KeyRegistry } from '../../lib/keys/key-registry.js';
import { Decimal, DECIMAL_PATTERN } from '../../lib/money.js';
import type { SealedColumn } from '../../lib/secrets/sealed-rows.js';
import type { ResolvedKeyring } from '../sealing.js';

/** The keys of the process that runs an operation (sealing.ts). */
export interface SealingAccess {
  /** The keyring to seal and open the columns' secrets with, upgraded and checked (sealing.ts openKeyring); CliError without one. */
  keyring(columns: readonly SealedColumn[]): Promise<ResolvedKeyring>;
  /** The keyring, made in the embedded data folder if it has none yet, unchecked (resolveKeyring); CliError without one. */
  resolve(): Promise<ResolvedKeyring>;
  /** The keys given to the process, unchecked, none made; null when it has none. */
  given(): Promise<ResolvedKeyring | null>;
}

/** What an operation runs on: the database of the process that runs it, its key registry, its keys and its configuration. */
export interface StateContext {
  readonly db: Database;
  readonly registry: KeyRegistry;
  readonly sealing: SealingAccess;
  readonly config: Config;
}

export interface StateOperation<I, O> {
  /** Its route is `POST /admin/cli/<name>`. */
  readonly name: string;
  readonly input: z.ZodType<I>;
  /** Decodes the JSON answer to O; encodes O to JSON. */
  readonly output: z.ZodType<O, unknown>;
  /** Throws CliError (message and exit code, as the command reports them) for an expected failure. */
  run(context: StateContext, input: I): Promise<O>;
}

/** Any operation, for the admin routes, which hold all of them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyStateOperation = StateOperation<any, any>;

export function defineOperation<In extends z.ZodType, Out extends z.ZodType>(operation: {
  readonly name: string;
  readonly input: In;
  readonly output: Out;
  readonly run: (context: StateContext, input: z.output<In>) => Promise<z.output<Out>>;
}): StateOperation<z.output<In>, z.output<Out>> {
  return operation as unknown as StateOperation<z.output<In>, z.output<Out>>;
}

/** A book's mode (`sandbox` or `live`), as every command's input and output names it. */
export const modeSchema = z.enum(MODES);

/** A Date as an ISO 8601 string. */
export const dateCodec = z.codec(z.iso.datetime(), z.date(), {
  decode: (text) => new Date(text),
  encode: (date) => date.toISOString(),
});

/** A Decimal as its exact plain-decimal text: no digit passes through a JS number. */
export const decimalCodec = z.codec(
  z.string().regex(DECIMAL_PATTERN),
  z.custom<Decimal>((value) => Decimal.isBigNumber(value)),
  {
    decode: (text) => new Decimal(text),
    encode: (value) => value.toFixed(),
  },
);

/** A problem of a key import file, as KeyImportError holds them. */
const keyImportProblemSchema = z.object({
  line: z.number().int().nullable(),
  field: z.string().nullable(),
  message: z.string(),
});

/**
 * An operation's failure on the wire: the message and exit code the command ends with, and for
 * a key import refused by the registry, the file and its problems (the command reports them
 * and goes on to the next file).
 */
export const wireErrorSchema = z.object({
  error: z.object({
    message: z.string(),
    exitCode: z.union([z.literal(1), z.literal(2)]),
    keyImport: z
      .object({ file: z.string(), problems: z.array(keyImportProblemSchema), invalid: z.boolean() })
      .optional(),
  }),
});
export type WireError = z.infer<typeof wireErrorSchema>;
