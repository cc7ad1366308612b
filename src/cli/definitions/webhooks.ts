/** `fxgate webhooks` as commander declares it; the subscriptions' work (commands/webhooks.ts) is imported when a subcommand runs. */
import { type Command, Option } from 'commander';

import { parseMode, parseOrgId } from '../arguments.js';
import type { AddWebhookOptions } from '../commands/webhooks.js';
import type { CliRun } from '../io.js';

function parseEventList(value: string): string[] {
  return value.split(',').map((event) => event.trim().toLowerCase());
}

const ADD_HELP = `
Events (default: deposits,withdrawals, what the legacy service sent):
  deposits            completed deposits       {type: "deposits", message: "Completed Deposits"}
  withdrawals         completed withdrawals    {type: "withdrawals", message: "Completed Withdrawals"}
  failed-deposits     failed deposits          {type: "deposits", message: "Failed Deposits"}
  failed-withdrawals  failed withdrawals       {type: "withdrawals", message: "Failed Withdrawals"}

Destinations: a live subscription's URL must reach a public address, a sandbox one a public or
loopback address; an in-house receiver's network is allowed with FXGATE_WEBHOOK_ALLOWED_NETWORKS.
A name is resolved at every delivery, and nothing is sent when it resolves to a refused address.

The secret is shown once, here: the receiver verifies X-Webhook-Signature with it (base64
HMAC-SHA256 of the raw body; verifyLegacyWebhook in fxgate/webhooks). It is stored sealed and
never shown again; to change it, add a new subscription and remove this one.

Example:
  fxgate webhooks add --org 0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c --mode sandbox \\
    --url https://example.com/hooks/fx --events deposits,withdrawals,failed-withdrawals`;

/** The work, imported when a subcommand runs. */
const load = () => import('../commands/webhooks.js');

export function registerWebhooksCommand(program: Command, run: CliRun): void {
  const webhooks = program
    .command('webhooks')
    .description(
      'Legacy webhook subscriptions, delivered by the gateway in the v1/v2 shape (DATABASE_URL, or the embedded database).',
    );

  webhooks
    .command('add')
    .description("Subscribe a URL to an org and mode's legacy webhook events; prints the signing secret, once.")
    .requiredOption('--org <uuid>', 'org id (a UUID)', parseOrgId)
    .requiredOption('--mode <mode>', 'sandbox or live', parseMode)
    .requiredOption('--url <url>', 'the receiver (https; http too in the sandbox or on loopback)')
    .addOption(new Option('--events <list>', 'comma-separated events (see below)').argParser(parseEventList))
    .option('--json', 'print {id, orgId, mode, url, events, secret} as JSON')
    .addHelpText('after', ADD_HELP)
    .action(async (options: AddWebhookOptions) => (await load()).addWebhookCommand(run, options));

  webhooks
    .command('list')
    .description("List active subscriptions (never their secrets) and the gateway's v3 endpoint of each org and mode.")
    .option('--org <uuid>', 'only the subscriptions of this org', parseOrgId)
    .option('--json', 'print a JSON array')
    .action(async (options: { org?: string; json?: boolean }) => (await load()).listWebhooksCommand(run, options));

  webhooks
    .command('remove')
    .description(
      "Remove a subscription and give up its pending deliveries; the org and mode's last one takes the gateway's v3 endpoint with it.",
    )
    .argument('<id>', 'the subscription id (a UUID)')
    .option('--json', 'print {id, removed: true} as JSON')
    .action(async (id: string, options: { json?: boolean }) => (await load()).removeWebhookCommand(run, id, options));
}
