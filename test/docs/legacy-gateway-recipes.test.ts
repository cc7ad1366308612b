/**
 * Every recipe of docs/legacy-gateway.md, run as written against `fxgate all` on loopback. A
 * recipe is the code block after a `<!-- recipe: NAME -->` comment: `start` gives the settings
 * the server starts with (its `VAR=value` words before `npm start`); a `js` block is written to
 * the file it is named after; a `console` block's `$ ` lines (with their `\` continuations) run
 * in bash, in the folder `npm start` runs in, after every earlier block that shows no answer
 * (those set variables), and what they print is held against the answer shown: JSON answers by
 * their `status`, `message` and every field's path, text line by line. `npx fxgate` runs this
 * checkout's built CLI, and nothing else is fetched; the guide's `http://127.0.0.1:8080` is the
 * server's own loopback address.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { BUILT_ENTRY, ensureBuiltCli } from '../cli/built-cli.js';
import { type CliProcess, killAllCliProcesses, startCli } from '../cli/cli-process.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const GUIDE = 'docs/legacy-gateway.md';
const DOCUMENTED_URL = 'http://127.0.0.1:8080';

interface Recipe {
  readonly name: string;
  readonly language: string;
  readonly text: string;
}

/** The marked blocks of the guide, in order. */
function recipes(markdown: string): Recipe[] {
  const found: Recipe[] = [];
  const pattern = /<!-- recipe: ([^\s]+) -->\n```([a-z]*)\n([\s\S]*?)\n```/g;
  for (const match of markdown.matchAll(pattern))
    found.push({ name: match[1]!, language: match[2]!, text: match[3]! });
  return found;
}

/** A console block: its commands (continuations joined) and the answer shown after them. */
function consoleParts(text: string): { commands: string[]; answer: string[] } {
  const commands: string[] = [];
  const answer: string[] = [];
  let continuing = false;
  for (const line of text.split('\n')) {
    if (continuing) commands[commands.length - 1] += `\n${line}`;
    else if (line.startsWith('$ ')) commands.push(line.slice(2));
    else answer.push(line);
    continuing = (line.startsWith('$ ') || continuing) && line.endsWith('\\');
  }
  return { commands, answer };
}

/** Every field's path in a JSON value: what an answer's shape is compared by. */
function paths(value: unknown, prefix = ''): string[] {
  if (Array.isArray(value)) return [`${prefix}[]`, ...value.flatMap((item) => paths(item, `${prefix}[]`))];
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => [`${prefix}.${key}`, ...paths(item, `${prefix}.${key}`)]);
  return [];
}

function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const GUIDE_RECIPES = recipes(readFileSync(join(REPO_ROOT, GUIDE), 'utf8'));
const CONSOLE_RECIPES = GUIDE_RECIPES.filter((recipe) => recipe.language === 'console' && recipe.name !== 'start');

let server: CliProcess;
let url: string;
let folder: string;

/** `npx fxgate ...` in a recipe: this checkout's build; any other package is refused, never fetched. */
const NPX = `npx() { if [ "$1" != fxgate ]; then echo "recipes run fxgate only" >&2; return 127; fi; shift; node ${JSON.stringify(BUILT_ENTRY)} "$@"; }`;

async function runInFolder(script: string): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)('bash', ['-c', `set -eo pipefail\n${NPX}\n${script}`], {
    cwd: folder,
    env: { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, HOME: folder },
    timeout: 60_000,
  });
}

/** Runs a console recipe after the earlier ones that set variables (those that show no answer); its stdout. */
const runs = new Map<number, number>();

async function runRecipe(index: number): Promise<string> {
  runs.set(index, (runs.get(index) ?? 0) + 1);
  const setup = CONSOLE_RECIPES.slice(0, index)
    .filter((earlier) => consoleParts(earlier.text).answer.join('').trim() === '')
    .flatMap((earlier) => consoleParts(earlier.text).commands);
  const { commands } = consoleParts(CONSOLE_RECIPES[index]!.text);
  for (const target of commands.join('\n').matchAll(/https?:\/\/[^\s/'"]+/g))
    expect(target[0], 'a recipe calls the gateway of the guide only').toBe(DOCUMENTED_URL);
  return (await runInFolder([...setup, ...commands].join('\n').replaceAll(DOCUMENTED_URL, url))).stdout;
}

beforeAll(async () => {
  await ensureBuiltCli();
  folder = await mkdtemp(join(tmpdir(), 'fxgate-guide-recipes-'));
  await mkdir(join(folder, 'data'), { mode: 0o700 });
  const start = GUIDE_RECIPES.find((recipe) => recipe.name === 'start');
  const words = /^\$ ((?:[A-Z_]+=\S+ )*)npm start$/.exec(start?.text ?? '');
  if (!words) throw new Error(`${GUIDE}: the start recipe must be "$ [VAR=value ...] npm start"`);
  const settings = Object.fromEntries(
    words[1]!
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map((word) => word.split('=') as [string, string]),
  );
  server = startCli(['all'], {
    ...settings,
    FXGATE_DATA_DIR: join(folder, 'data'),
    HOST: '127.0.0.1',
    PORT: '0',
    FXGATE_ADMIN_PORT: 'off',
    LOG_LEVEL: 'info',
  });
  [, url] = (await server.waitFor(/^fxgate: listening on (http:\/\/\S+) \(v1, v2 and v3\)$/m)) as [string, string];
  for (const recipe of GUIDE_RECIPES.filter((block) => block.language === 'js'))
    await writeFile(join(folder, recipe.name), `${recipe.text}\n`);
}, 180_000);

afterAll(async () => {
  await killAllCliProcesses();
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe(`the recipes of ${GUIDE}`, () => {
  it('are there: a start, a token recipe in JavaScript, and console recipes', () => {
    expect(GUIDE_RECIPES.map((recipe) => recipe.name)).toEqual(
      expect.arrayContaining(['start', 'sandbox-key', 'legacy-token.mjs', 'v2-quote', 'refused-request-id']),
    );
    for (const recipe of CONSOLE_RECIPES) expect(consoleParts(recipe.text).commands.length).toBeGreaterThan(0);
  });

  it.each(CONSOLE_RECIPES.map((recipe, index) => [recipe.name, index] as const))(
    '%s answers as shown',
    { timeout: 120_000 },
    async (_name, index) => {
      const { answer } = consoleParts(CONSOLE_RECIPES[index]!.text);
      const shown = answer.join('\n').trim();
      const got = (await runRecipe(index)).replaceAll('\r', '').trim();
      const shownJson = parsedJson(shown);
      if (shownJson === undefined) {
        expect(got).toBe(shown);
        return;
      }
      const gotJson = parsedJson(got);
      expect(gotJson, got).toBeDefined();
      expect(gotJson).toMatchObject({
        status: (shownJson as { status: unknown }).status,
        message: (shownJson as { message: unknown }).message,
      });
      expect([...new Set(paths(gotJson))].sort()).toEqual([...new Set(paths(shownJson))].sort());
    },
  );

  it("the refused call's reason is in the gateway's log under the id the client quotes", { timeout: 120_000 }, async () => {
    const index = CONSOLE_RECIPES.findIndex((recipe) => recipe.name === 'refused-request-id');
    const id = /X-Request-Id: ([^'\s]+)/.exec(CONSOLE_RECIPES[index]!.text)![1]!;
    const refusals = (): { reason?: string }[] =>
      server.stdout
        .split('\n')
        .map((line) => parsedJson(line) as { reqId?: string; msg?: string; reason?: string } | undefined)
        .filter((line) => line?.reqId === id && line.msg === 'legacy request refused') as { reason?: string }[];
    await runRecipe(index);
    // One line per run of the recipe, the earlier test's included (pino writes them a moment after the answer).
    await expect.poll(() => refusals().length, { timeout: 5000 }).toBe(runs.get(index));
    expect(refusals().at(-1)).toMatchObject({
      operation: 'balances',
      code: 'AUTH_TOKEN_INVALID',
      reason: 'TOKEN_MALFORMED: nbf must be a NumericDate',
    });
  });
});
