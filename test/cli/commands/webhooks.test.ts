/**
 * `fxgate webhooks add | list | remove` on PostgreSQL: the functions the commands run, with no
 * v3 to register with, then the command line (runCli, in process) for its output, its exit
 * codes and its help. Registration with v3 through the command line is in the e2e webhook tests.
 */
import { randomBytes } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { LEGACY_WEBHOOKS } from '../../../mappings/webhooks.js';
import {
  addWebhook,
  describeNote,
  formatWebhookTable,
  listWebhooks,
  removeWebhook,
  type WebhookCommandDeps,
} from '../../../src/cli/commands/webhooks.js';
import { registrationSecretBinding } from '../../../src/gateway/webhooks/registrations.js';
import { subscriptionSecretBinding } from '../../../src/gateway/webhooks/subscriptions.js';
import { CliError } from '../../../src/lib/errors/internal-errors.js';
import { newUuid } from '../../../src/lib/ids.js';
import { AllowedNetworks } from '../../../src/lib/net/allowed-networks.js';
import { SealingKeyring } from '../../../src/lib/secrets/sealing-keyring.js';
import { createTestPostgres, type TestDatabase } from '../../support/databases.js';
import { fxgate } from '../in-process-cli.js';

const ORG = '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c';
const SECRET = /^whsec_[A-Za-z0-9_-]{43}$/;

let database: TestDatabase;
let deps: WebhookCommandDeps;
let env: Record<string, string>;
/** The key the functions seal with, and the command line is given: one deployment's. */
const KEY = randomBytes(32);
const keyring = SealingKeyring.of([KEY]);

beforeAll(async () => {
  database = await createTestPostgres();
  deps = {
    db: database.db,
    keyring,
    events: {
      names: ['deposits', 'withdrawals', 'failed-deposits', 'failed-withdrawals'],
      defaults: ['deposits', 'withdrawals'],
    },
    registration: null,
  };
  env = { DATABASE_URL: database.url!, FXGATE_SECRETS_KEY: KEY.toString('base64url') };
});
afterAll(async () => {
  await database?.drop();
});

async function refusal(run: Promise<unknown>): Promise<CliError> {
  try {
    await run;
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    return error as CliError;
  }
  throw new Error('expected a CliError');
}

describe('the functions the commands run', () => {
  it('adds a subscription with the default events and a fresh secret, kept sealed; registration is left to the gateway', async () => {
    const added = await addWebhook(deps, { org: ORG, mode: 'sandbox', url: 'http://localhost:9000/hooks' });
    expect(added.subscription).toMatchObject({
      orgId: ORG,
      mode: 'sandbox',
      url: 'http://localhost:9000/hooks',
      events: ['deposits', 'withdrawals'],
      status: 'ACTIVE',
      removedAt: null,
    });
    expect(added.subscription.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(added.secret).toMatch(SECRET);
    expect(added.note).toEqual({ state: 'deferred' });
    const { rows } = await database.db.query<{ secret: string }>(
      'SELECT secret FROM legacy_webhook_subscriptions WHERE id = $1',
      [added.subscription.id],
    );
    expect(rows[0]!.secret).not.toContain(added.secret);
    expect(keyring.open(rows[0]!.secret, subscriptionSecretBinding(added.subscription.id))).toBe(added.secret);
    const again = await addWebhook(deps, { org: ORG, mode: 'sandbox', url: 'http://localhost:9000/hooks' });
    expect(again.secret).not.toBe(added.secret);
  });

  it('keeps the events asked for, in the declared order, once each', async () => {
    const added = await addWebhook(deps, {
      org: ORG,
      mode: 'live',
      url: 'https://example.com/fx',
      events: ['failed-withdrawals', 'deposits', 'deposits', ' withdrawals '],
    });
    expect(added.subscription.events).toEqual(['deposits', 'withdrawals', 'failed-withdrawals']);
  });

  it('refuses what cannot be a subscription as a usage error (exit 2), storing nothing', async () => {
    const { rows: before } = await database.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM legacy_webhook_subscriptions',
    );
    const cases: [Parameters<typeof addWebhook>[1], RegExp][] = [
      [{ org: ORG, mode: 'live', url: 'http://example.com/fx' }, /live subscriptions must use https/],
      [{ org: ORG, mode: 'sandbox', url: 'ftp://example.com/fx' }, /the scheme must be https/],
      [{ org: ORG, mode: 'sandbox', url: 'https://user:pass@example.com/fx' }, /must not contain credentials/],
      [{ org: ORG, mode: 'sandbox', url: 'https://example.com/fx#top' }, /fragment/],
      [{ org: ORG, mode: 'sandbox', url: '/relative' }, /not an absolute URL/],
      [{ org: ORG, mode: 'sandbox', url: `https://example.com/${'a'.repeat(2048)}` }, /longer than 2048/],
      [
        { org: ORG, mode: 'sandbox', url: 'https://example.com/fx', events: ['trades'] },
        /trades is not an event; the events are deposits, withdrawals, failed-deposits, failed-withdrawals/,
      ],
      [{ org: ORG, mode: 'sandbox', url: 'https://example.com/fx', events: ['', ' '] }, /name at least one of/],
      [{ org: 'not-an-org', mode: 'sandbox', url: 'https://example.com/fx' }, /an org id is a UUID/],
    ];
    for (const [input, message] of cases) {
      const error = await refusal(addWebhook(deps, input));
      expect(error.exitCode, error.message).toBe(2);
      expect(error.message).toMatch(message);
    }
    // A receiver on loopback is the sandbox's; it may use http, as v3's own endpoints may.
    expect((await addWebhook(deps, { org: ORG, mode: 'sandbox', url: 'http://127.0.0.1:9/fx' })).subscription.url).toBe(
      'http://127.0.0.1:9/fx',
    );
    const { rows: after } = await database.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM legacy_webhook_subscriptions',
    );
    expect(after[0]!.n).toBe(before[0]!.n + 1);
  });

  it('refuses destinations the policy refuses, naming the reason and the setting that allows an in-house receiver', async () => {
    const hint = '(for an in-house receiver, add its network to FXGATE_WEBHOOK_ALLOWED_NETWORKS)';
    const cases: [Parameters<typeof addWebhook>[1], string][] = [
      [
        { org: ORG, mode: 'live', url: 'https://169.254.169.254/latest/meta-data/' },
        `169.254.169.254 is a link-local address (cloud metadata); live webhooks must reach a public address ${hint}`,
      ],
      [
        { org: ORG, mode: 'live', url: 'http://0x7f000001:8081/metrics' },
        `127.0.0.1 is a loopback address; live webhooks must reach a public address ${hint}`,
      ],
      [
        { org: ORG, mode: 'sandbox', url: 'https://[::ffff:10.0.0.1]/fx' },
        `::ffff:a00:1 is 10.0.0.1 (IPv4-mapped), a private address; sandbox webhooks must reach a public or loopback address ${hint}`,
      ],
      [
        { org: ORG, mode: 'sandbox', url: 'https://metadata.google.internal/' },
        `metadata.google.internal is a private name (.internal is never public); sandbox webhooks must reach a public or loopback address ${hint}`,
      ],
    ];
    for (const [input, reason] of cases) {
      const error = await refusal(addWebhook(deps, input));
      expect(error.exitCode, error.message).toBe(2);
      expect(error.message).toBe(`--url ${JSON.stringify(input.url)}: ${reason}`);
    }
    // The operator's allowed networks: an in-house receiver, in either mode; on loopback, http in live too.
    const inHouse = { ...deps, outbound: { networks: AllowedNetworks.of(['10.0.0.0/8', '127.0.0.1']) } };
    for (const url of ['https://[::ffff:10.0.0.1]/fx', 'http://127.0.0.1:9/fx', 'https://hooks.corp.internal/fx'])
      expect((await addWebhook(inHouse, { org: ORG, mode: 'live', url })).subscription.url).toBe(new URL(url).href);
  });

  it('lists active subscriptions with the v3 endpoint of their org and mode, and never a secret', async () => {
    const org = newUuid();
    // A second between the two: the list is in creation order, and two made in one millisecond would be in id order.
    let clock = Date.now();
    const ticking: WebhookCommandDeps = { ...deps, now: () => new Date((clock += 1000)) };
    const first = await addWebhook(ticking, { org, mode: 'sandbox', url: 'https://example.com/a' });
    const second = await addWebhook(ticking, {
      org,
      mode: 'live',
      url: 'https://example.com/b',
      events: ['withdrawals'],
    });
    const registrationId = newUuid();
    await database.db.query(
      `INSERT INTO legacy_webhook_registrations (id, org_id, mode, url, status, idempotency_key, endpoint_id, secret, created_at, updated_at)
       VALUES ($1, $2, 'sandbox', 'http://gw/x', 'ACTIVE', 'k', 'whe_0190c5a87d2e7c1a9f3b2a4d6e8f0b1c', $3, now(), now())`,
      [registrationId, org, keyring.seal('whsec_x', registrationSecretBinding(registrationId))],
    );
    const listed = await listWebhooks(deps, org);
    expect(listed.map((webhook) => [webhook.id, webhook.mode, webhook.v3EndpointId])).toEqual([
      [first.subscription.id, 'sandbox', 'whe_0190c5a87d2e7c1a9f3b2a4d6e8f0b1c'],
      [second.subscription.id, 'live', null],
    ]);
    expect(JSON.stringify(listed)).not.toContain('whsec_');
    const table = formatWebhookTable(listed).split('\n');
    expect(table[0]!.split(/\s{2,}/)).toEqual(['ID', 'ORG', 'MODE', 'URL', 'EVENTS', 'CREATED', 'V3 ENDPOINT']);
    expect(table[2]!.split(/\s{2,}/)).toEqual([
      second.subscription.id,
      org,
      'live',
      'https://example.com/b',
      'withdrawals',
      second.subscription.createdAt,
      'pending',
    ]);
    expect((await listWebhooks(deps)).length).toBeGreaterThan(listed.length);
  });

  it('removes a subscription and gives up its pending deliveries; an unknown or removed one is exit 1', async () => {
    const added = await addWebhook(deps, { org: newUuid(), mode: 'sandbox', url: 'https://example.com/gone' });
    const eventId = newUuid();
    await database.db.query(
      `INSERT INTO legacy_webhook_events (id, v3_event_id, org_id, mode, v3_event_type, legacy_event, body, created_at, received_at)
       VALUES ($1, 'evt_x', $2, 'sandbox', 'deposit.completed', 'deposits', '{}', now(), now())`,
      [eventId, added.subscription.orgId],
    );
    await database.db.query(
      `INSERT INTO legacy_webhook_deliveries (event_id, subscription_id, status, next_attempt_at, created_at) VALUES ($1, $2, 'PENDING', now(), now())`,
      [eventId, added.subscription.id],
    );
    const removed = await removeWebhook(deps, added.subscription.id.toUpperCase());
    expect(removed.subscription).toMatchObject({
      id: added.subscription.id,
      status: 'REMOVED',
      removedAt: expect.any(String),
    });
    expect(removed.note).toEqual({ state: 'deferred' });
    const { rows } = await database.db.query<{ status: string }>(
      'SELECT status FROM legacy_webhook_deliveries WHERE subscription_id = $1',
      [added.subscription.id],
    );
    expect(rows).toEqual([{ status: 'GAVE_UP' }]);
    expect(await listWebhooks(deps, added.subscription.orgId)).toEqual([]);
    for (const id of [added.subscription.id, newUuid(), 'nonsense']) {
      const error = await refusal(removeWebhook(deps, id));
      expect(error.exitCode).toBe(1);
      expect(error.message).toBe(`no active legacy webhook subscription ${id}`);
    }
  });

  it('says what happened at v3 in one line', () => {
    expect(
      describeNote(
        { state: 'registered', registration: { orgId: ORG, mode: 'live', endpointId: 'whe_1', url: 'https://gw/x' } },
        'add',
      ),
    ).toBe(`v3 endpoint: whe_1 delivers org ${ORG} (live) to https://gw/x`);
    expect(describeNote({ state: 'removed', endpointIds: ['whe_1'] }, 'remove')).toBe(
      'v3 endpoint deleted: whe_1 (no subscription of the org and mode is left)',
    );
    expect(describeNote({ state: 'removed', endpointIds: [] }, 'remove')).toBe(
      'v3 endpoint kept: other subscriptions of the org and mode use it',
    );
    expect(describeNote({ state: 'failed', message: 'v3 is unreachable' }, 'add')).toBe(
      'v3 registration failed: v3 is unreachable; the gateway retries it at start-up and every 30 s while it runs',
    );
    expect(describeNote({ state: 'deferred' }, 'remove')).toMatch(
      /^v3 endpoint removal: left to the gateway .*FXGATE_UPSTREAM_URL and FXGATE_GATEWAY_WEBHOOK_URL/,
    );
  });
});

describe('the command line', () => {
  it('adds (text and --json), lists and removes', async () => {
    const org = newUuid();
    const text = await fxgate(
      [
        'webhooks',
        'add',
        '--org',
        org.toUpperCase(),
        '--mode',
        'SANDBOX',
        '--url',
        'https://example.com/hooks',
        '--events',
        'Withdrawals,failed-withdrawals',
      ],
      env,
    );
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toBe('');
    expect(text.stdout).toMatch(
      new RegExp(
        `^id: [0-9a-f-]{36}\\norg: ${org}\\nmode: sandbox\\nurl: https://example\\.com/hooks\\nevents: withdrawals,failed-withdrawals\\nsecret: whsec_[A-Za-z0-9_-]{43}\\n` +
          '\\(the secret is shown only now: keep it where the receiver can read it\\)\\nv3 registration: left to the gateway',
      ),
    );
    const json = await fxgate(
      ['webhooks', 'add', '--org', org, '--mode', 'live', '--url', 'https://example.com/live', '--json'],
      env,
    );
    expect(json.code, json.stderr).toBe(0);
    const printed = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(Object.keys(printed)).toEqual(['id', 'orgId', 'mode', 'url', 'events', 'secret']);
    expect(printed).toMatchObject({
      orgId: org,
      mode: 'live',
      url: 'https://example.com/live',
      events: ['deposits', 'withdrawals'],
      secret: expect.stringMatching(SECRET),
    });
    expect(json.stderr).toMatch(/^fxgate: v3 registration: left to the gateway/);

    const listed = await fxgate(['webhooks', 'list', '--org', org], env);
    expect(listed.code).toBe(0);
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['ID', 'ORG', 'MODE', 'URL', 'EVENTS', 'CREATED', 'V3 ENDPOINT']);
    expect(rows.map((row) => row.split(/\s{2,}/).slice(2))).toEqual([
      [
        'sandbox',
        'https://example.com/hooks',
        'withdrawals,failed-withdrawals',
        expect.stringMatching(/^\d{4}-/),
        'pending',
      ],
      ['live', 'https://example.com/live', 'deposits,withdrawals', expect.stringMatching(/^\d{4}-/), 'pending'],
    ]);
    expect(listed.stdout).not.toContain('whsec_');

    const removed = await fxgate(['webhooks', 'remove', String(printed.id), '--json'], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout)).toEqual({ id: printed.id, removed: true });
    const gone = await fxgate(['webhooks', 'remove', String(printed.id)], env);
    expect(gone).toMatchObject({
      code: 1,
      stderr: `fxgate: no active legacy webhook subscription ${String(printed.id)}\n`,
    });
    expect((await fxgate(['webhooks', 'list', '--org', newUuid()], env)).stdout).toBe('no subscriptions\n');
  });

  it.each([
    [['--mode', 'sandbox', '--url', 'https://example.com'], /required option '--org <uuid>' not specified/],
    [
      ['--org', ORG, '--mode', 'test', '--url', 'https://example.com'],
      /--mode <mode>.*The mode is one of sandbox, live/,
    ],
    [['--org', ORG, '--mode', 'live', '--url', 'http://example.com'], /live subscriptions must use https/],
    [
      ['--org', ORG, '--mode', 'live', '--url', 'https://10.0.0.1/fx'],
      /"https:\/\/10\.0\.0\.1\/fx": 10\.0\.0\.1 is a private address; live webhooks must reach a public address \(for an in-house receiver, add its network to FXGATE_WEBHOOK_ALLOWED_NETWORKS\)/,
    ],
    [
      ['--org', ORG, '--mode', 'sandbox', '--url', 'https://example.com', '--events', 'trades'],
      /trades is not an event/,
    ],
  ])('refuses bad arguments with exit 2: %j', async (args, message) => {
    const result = await fxgate(['webhooks', 'add', ...args], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('takes the networks of FXGATE_WEBHOOK_ALLOWED_NETWORKS, and refuses a bad list as bad configuration', async () => {
    const org = newUuid();
    const args = ['webhooks', 'add', '--org', org, '--mode', 'live', '--url', 'https://10.1.2.3/fx', '--json'];
    const added = await fxgate(args, { ...env, FXGATE_WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8' });
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ orgId: org, mode: 'live', url: 'https://10.1.2.3/fx' });
    const bad = await fxgate(args, { ...env, FXGATE_WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8,0.0.0.0/0' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/FXGATE_WEBHOOK_ALLOWED_NETWORKS: "0\.0\.0\.0\/0" spans addresses of different kinds/);
  });

  it('on PostgreSQL, adds only with the key given (exit 2 naming the settings); lists and removes without one', async () => {
    const { FXGATE_SECRETS_KEY: _key, ...keyless } = env;
    const added = await fxgate(
      ['webhooks', 'add', '--org', ORG, '--mode', 'sandbox', '--url', 'https://example.com'],
      keyless,
    );
    expect(added.code).toBe(2);
    expect(added.stderr).toMatch(/^fxgate: webhook secrets are sealed with a key kept out of the database/);
    expect(added.stderr).toMatch(/FXGATE_SECRETS_KEY .*`fxgate secrets generate-key`.*FXGATE_SECRETS_KEY_FILE/);
    const { rows } = await database.db.query<{ id: string }>(
      "SELECT id FROM legacy_webhook_subscriptions WHERE org_id = $1 AND status = 'ACTIVE' LIMIT 1",
      [ORG],
    );
    expect((await fxgate(['webhooks', 'list', '--org', ORG], keyless)).code).toBe(0);
    expect(await fxgate(['webhooks', 'remove', rows[0]!.id], keyless)).toMatchObject({ code: 0 });
  });

  it('refuses to add under another key than the rows were sealed with: exit 2 naming the key ids, nothing stored', async () => {
    await addWebhook(deps, { org: ORG, mode: 'sandbox', url: 'https://example.com/sealed' });
    const before = await database.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM legacy_webhook_subscriptions',
    );
    const other = randomBytes(32).toString('base64url');
    const result = await fxgate(
      ['webhooks', 'add', '--org', ORG, '--mode', 'sandbox', '--url', 'https://example.com'],
      { ...env, FXGATE_SECRETS_KEY: other },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`sealed under keys this process was not given: key ${keyring.sealingKeyId} (`);
    expect(result.stderr).not.toContain(other);
    const after = await database.db.query<{ n: number }>('SELECT count(*)::int AS n FROM legacy_webhook_subscriptions');
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
  });

  it('its help names exactly the declared events, the default ones first', async () => {
    const help = await fxgate(['webhooks', 'add', '--help'], env);
    expect(help.code).toBe(0);
    const listed = [...help.stdout.matchAll(/^ {2}([a-z-]+) {2,}.*\{type: "(\w+)", message: "([^"]+)"\}$/gm)].map(
      ([, name, type, message]) => ({ name, type, message }),
    );
    expect(listed).toEqual(
      Object.entries(LEGACY_WEBHOOKS.events).map(([name, event]) => ({
        name,
        type: event.type,
        message: event.message,
      })),
    );
    expect(help.stdout).toContain('Events (default: deposits,withdrawals');
  });
});
