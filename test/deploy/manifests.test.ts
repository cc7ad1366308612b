/**
 * deploy/ cannot rot. Docker and Kubernetes do not run here, so the Compose file, the Kubernetes
 * manifests and the configuration files they mount are read as their tools read them and held
 * to the product: every fxgate container's command is parsed by the CLI's own program, its
 * settings by src/lib/config.ts's loadConfig (the secret files it names being the ones
 * make-secrets.sh writes, the secrets those the deploy README makes), and ports, probes, grace
 * periods, balancer checks, scrape targets, PgBouncer, Sentinel, selectors and images against
 * those settings (compose-checks.ts, kubernetes-checks.ts). haproxy itself checks both of its
 * configurations, in a network namespace of its own, so that not even its resolver's socket
 * reaches out. Every check is then shown to catch a mistake planted in a copy of the files.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';

import { ensureDebianBinary } from '../support/debian-package.js';
import { isRoot } from '../support/local-processes.js';
import { composeChecks, type ComposeModel, composeModel } from './compose-checks.js';
import {
  documentedSecrets,
  makeSecrets,
  readCompose,
  readDeployFile,
  readKubernetesObjects,
  readKustomization,
} from './deploy-files.js';
import { kubernetesChecks, type KubernetesModel, kubernetesModel } from './kubernetes-checks.js';

/** The files of deploy/ with some replaced: a planted mistake. */
type Plant = Readonly<Record<string, readonly (readonly [string, string])[]>>;

function reader(plant: Plant = {}): (relative: string) => string {
  return (relative) => {
    let text = readDeployFile(relative);
    for (const [from, to] of plant[relative] ?? []) {
      // A plant that changes nothing would make its test pass on anything.
      if (!text.includes(from)) throw new Error(`the plant ${JSON.stringify(from)} is not in deploy/${relative}`);
      text = text.replace(from, to);
    }
    return text;
  };
}

let secretsDir: string;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'fxgate-deploy-'));
  secretsDir = path.join(scratch, 'secrets');
  await makeSecrets(secretsDir);
});

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

function composeFleet(plant: Plant = {}): Promise<ComposeModel> {
  const read = reader(plant);
  return composeModel({
    compose: readCompose(read('compose/compose.yaml')),
    readFile: (relative) => read(`compose/${relative}`),
    secretsDir,
  });
}

function kubernetesFleet(plant: Plant = {}): Promise<KubernetesModel> {
  const read = reader(plant);
  const kustomization = readKustomization(read);
  return kubernetesModel({
    objects: readKubernetesObjects(kustomization.resources, read),
    kustomization,
    secrets: documentedSecrets(read('README.md')),
    secretsDir,
    scrapeConfig: read('kubernetes/prometheus-scrape.yaml'),
  });
}

describe('deploy/compose/compose.yaml', () => {
  let model: ComposeModel;
  beforeAll(async () => {
    model = await composeFleet();
  });

  it('is read as Compose reads it: four fxgate servers and the one-off CLI', () => {
    expect(model.servers.map((server) => `${server.name}: ${server.command.name}`).sort()).toEqual([
      'core-1: core',
      'core-2: core',
      'gateway-1: gateway',
      'gateway-2: gateway',
    ]);
    expect(model.containers.map((each) => each.name)).toContain('cli');
  });

  it.each(Object.keys(composeChecks) as (keyof typeof composeChecks)[])('%s', (name) => {
    expect(composeChecks[name](model)).toEqual([]);
  });
});

describe('deploy/kubernetes', () => {
  let model: KubernetesModel;
  beforeAll(async () => {
    model = await kubernetesFleet();
  });

  it('is read as Kubernetes reads it: the core and the gateway, each with its settings and secrets', () => {
    expect(model.servers.map((server) => `${server.deployment.metadata.name}: ${server.command.name}`).sort()).toEqual([
      'fxgate-core: core',
      'fxgate-gateway: gateway',
    ]);
    // YAML 1.1, as Kubernetes parses it: 0440 is octal.
    const mode = model.deployments[0]!.spec.template.spec.volumes.find((volume) => volume.secret)?.secret?.defaultMode;
    expect(mode).toBe(0o440);
    const core = model.servers.find((server) => server.command.name === 'core')!;
    expect(core.config.DATABASE_URL).toMatch(/^postgres:\/\//);
    expect(core.config.FXGATE_ADMIN_TOKEN_FILE).toMatch(/^[\x21-\x7e]{32,}$/);
  });

  it.each(Object.keys(kubernetesChecks) as (keyof typeof kubernetesChecks)[])('%s', (name) => {
    expect(kubernetesChecks[name](model)).toEqual([]);
  });
});

const run = promisify(execFile);

/** haproxy's check of a configuration, in a network namespace with nothing but a loopback that is down. */
async function haproxyCheck(haproxy: string, config: string): Promise<{ ok: boolean; output: string }> {
  const file = path.join(scratch, `haproxy-${Math.random().toString(36).slice(2)}.cfg`);
  await writeFile(file, config);
  const unshare = isRoot() ? ['-n'] : ['-r', '-n'];
  try {
    const { stdout, stderr } = await run('unshare', [...unshare, haproxy, '-c', '-f', file], { timeout: 30_000 });
    return { ok: true, output: `${stdout}${stderr}` };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` || failed.message };
  }
}

/** haproxy's warnings but those of a resolver it cannot reach in the empty namespace. */
function unexpectedWarnings(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.includes('[WARNING]') && !/can't connect socket for nameserver/.test(line));
}

/** The two haproxy configurations, the secret paths they read pointing at make-secrets.sh's files. */
function haproxyConfigurations(read = reader()): Record<string, string> {
  const compose = read('compose/haproxy.cfg').replaceAll(
    '/run/secrets/fxgate-internal-tls',
    path.join(secretsDir, 'fxgate-internal-tls'),
  );
  const configMap = parseAllDocuments(read('kubernetes/webhook-tls.yaml'), { version: '1.1' })
    .map((document) =>
      z.looseObject({ kind: z.string(), data: z.record(z.string(), z.string()).optional() }).parse(document.toJS()),
    )
    .find((object) => object.kind === 'ConfigMap');
  const kubernetes = (configMap?.data?.['haproxy.cfg'] ?? '').replaceAll(
    '/run/secrets/fxgate-internal-tls/tls.pem',
    path.join(secretsDir, 'fxgate-internal-tls'),
  );
  return { 'compose/haproxy.cfg': compose, 'kubernetes/webhook-tls.yaml': kubernetes };
}

describe('haproxy itself', () => {
  let haproxy: string;
  beforeAll(async () => {
    haproxy = await ensureDebianBinary({ binary: 'haproxy', package: 'haproxy' });
  });

  it.each(['compose/haproxy.cfg', 'kubernetes/webhook-tls.yaml'])(
    'accepts the configuration of %s, warning of nothing',
    async (file) => {
      const { ok, output } = await haproxyCheck(haproxy, haproxyConfigurations()[file]!);
      expect({ ok, warnings: unexpectedWarnings(output) }, output).toEqual({ ok: true, warnings: [] });
    },
  );

  it('refuses a misspelled keyword', async () => {
    const planted = haproxyConfigurations(
      reader({ 'compose/haproxy.cfg': [['option redispatch', 'option redispatched']] }),
    );
    const { ok, output } = await haproxyCheck(haproxy, planted['compose/haproxy.cfg']!);
    expect(ok).toBe(false);
    expect(output).toMatch(/redispatched/);
  });
});

describe('a mistake planted in a copy of the files is caught by its check', () => {
  const composeCases: readonly [keyof typeof composeChecks, Plant, string][] = [
    [
      'every setting is one of src/lib/config.ts',
      { 'compose/compose.yaml': [["FXGATE_DRAIN_DELAY_MS: '5000'", "FXGATE_DRAIN_DELAYS_MS: '5000'"]] },
      'compose service gateway-1: FXGATE_DRAIN_DELAYS_MS is not a setting of src/lib/config.ts',
    ],
    [
      'at least two gateways and two cores, every command a real fxgate command',
      { 'compose/compose.yaml': [['gateway, --upstream', 'gateway, --upstrem']] },
      "unknown option '--upstrem'",
    ],
    [
      'every server starts with its settings, those of a production fleet',
      { 'compose/compose.yaml': [["FXGATE_SHUTDOWN_GRACE_MS: '10000'", "FXGATE_SHUTDOWN_GRACE_MS: '4000'"]] },
      'FXGATE_SHUTDOWN_GRACE_MS: must be more than the drain delay',
    ],
    [
      'the stop grace covers the drain delay and the grace',
      { 'compose/compose.yaml': [['stop_grace_period: 15s', 'stop_grace_period: 10s']] },
      'stop_grace_period is 10000 ms; the drain delay and the grace take 15000 ms',
    ],
    [
      'haproxy balances the gateways and the cores, checking /readyz within the drain delay',
      { 'compose/haproxy.cfg': [['inter 1s fall 2', 'inter 3s fall 2']] },
      'is taken out 6000 ms after its /readyz turns 503, not within the drain delay of 5000 ms',
    ],
    [
      'haproxy balances the gateways and the cores, checking /readyz within the drain delay',
      { 'compose/haproxy.cfg': [['server core-2 core-2:8080', 'server core-2 core-2:8081']] },
      'haproxy backend cores: its servers are',
    ],
    [
      'the cores reach the gateways webhook receiver over TLS through haproxy, and nowhere else private',
      {
        'compose/compose.yaml': [
          ['FXGATE_WEBHOOK_ALLOWED_NETWORKS: 172.30.5.10', 'FXGATE_WEBHOOK_ALLOWED_NETWORKS: 172.30.5.0/24'],
        ],
      },
      "not haproxy's address alone (172.30.5.10)",
    ],
    [
      'Prometheus scrapes every admin listener with the admin token',
      { 'compose/prometheus.yml': [["'core-2:9091'", "'core-2:9092'"]] },
      'Prometheus does not scrape core-2:9091',
    ],
    [
      'PgBouncer pools transactions for DATABASE_URL in front of PostgreSQL',
      { 'compose/pgbouncer/pgbouncer.ini': [['pool_mode = transaction', 'pool_mode = session']] },
      "PgBouncer's pool_mode is session, not transaction",
    ],
    [
      'three Sentinels watch the primary FXGATE_REDIS_SENTINEL_NAME names, with a majority quorum',
      { 'compose/redis/sentinel.conf': [['redis-1 6379 2', 'redis-1 6379 1']] },
      'quorum 1 is not a majority of the 3 Sentinels',
    ],
    [
      'every server shares a network with what it connects to',
      { 'compose/compose.yaml': [['  networks: [fleet, data]\n\nx-core-env', '  networks: [fleet]\n\nx-core-env']] },
      'compose service gateway-1: shares no network with pgbouncer',
    ],
    [
      'every secret is a file make-secrets.sh writes, none in the repository',
      { 'compose/compose.yaml': [['file: ./secrets/postgres-password', 'file: ./secrets/postgres-passwd']] },
      'the secret postgres-password (./secrets/postgres-passwd) is no file make-secrets.sh writes',
    ],
    [
      'every fxgate service runs the image of the repository Dockerfile at the package version',
      { 'compose/compose.yaml': [['image: fxgate:0.1.0', 'image: fxgate:0.0.9']] },
      'is tagged fxgate:0.0.9',
    ],
  ];

  it.each(composeCases)('compose: %s (%#)', async (check, plant, expected) => {
    const model = await composeFleet(plant);
    expect(composeChecks[check](model)).toContainEqual(expect.stringContaining(expected));
  });

  const kubernetesCases: readonly [keyof typeof kubernetesChecks, Plant, string][] = [
    [
      'two or more replicas of the gateway and the core, every command a real fxgate command',
      { 'kubernetes/core.yaml': [['replicas: 2', 'replicas: 1']] },
      'Deployment fxgate-core container fxgate: 1 replica',
    ],
    [
      'two or more replicas of the gateway and the core, every command a real fxgate command',
      { 'kubernetes/gateway.yaml': [["'http://fxgate-core:8080'", "'fxgate-core:8080'"]] },
      "option '--upstream <url>' argument 'fxgate-core:8080' is invalid",
    ],
    [
      'every setting is one of src/lib/config.ts',
      { 'kubernetes/configmap.yaml': [['FXGATE_REDIS_SENTINEL_NAME:', 'FXGATE_REDIS_SENTINELS_NAME:']] },
      'FXGATE_REDIS_SENTINELS_NAME is not a setting of src/lib/config.ts',
    ],
    [
      'probes: readiness on /readyz within the drain delay, liveness on /healthz, on PORT',
      { 'kubernetes/core.yaml': [['path: /readyz', 'path: /healthz']] },
      'its readinessProbe asks /healthz, not /readyz',
    ],
    [
      'probes: readiness on /readyz within the drain delay, liveness on /healthz, on PORT',
      { 'kubernetes/configmap.yaml': [["FXGATE_ADMIN_PORT: '9091'", "FXGATE_ADMIN_PORT: '9092'"]] },
      'no container port is FXGATE_ADMIN_PORT 9092',
    ],
    [
      'the grace period covers the drain delay and the grace, no preStop, rollouts keep every replica',
      { 'kubernetes/gateway.yaml': [['terminationGracePeriodSeconds: 15', 'terminationGracePeriodSeconds: 10']] },
      'terminationGracePeriodSeconds is 10; the drain delay and the grace take 15 s',
    ],
    [
      // Unset, the two take their defaults: 5 s of drain with DATABASE_URL set, 10 s of grace.
      'the grace period covers the drain delay and the grace, no preStop, rollouts keep every replica',
      {
        'kubernetes/configmap.yaml': [
          ["  FXGATE_DRAIN_DELAY_MS: '5000'\n", ''],
          ["  FXGATE_SHUTDOWN_GRACE_MS: '10000'\n", ''],
        ],
        'kubernetes/core.yaml': [['terminationGracePeriodSeconds: 15', 'terminationGracePeriodSeconds: 14']],
      },
      'Deployment fxgate-core container fxgate: terminationGracePeriodSeconds is 14; the drain delay and the grace take 15 s',
    ],
    [
      'every selector selects its pods: Deployments, Services, disruption budgets, network policies',
      {
        'kubernetes/core.yaml': [
          [
            '  minAvailable: 1\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: fxgate\n      app.kubernetes.io/component: core',
            '  minAvailable: 1\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: fxgate\n      app.kubernetes.io/component: cores',
          ],
        ],
      },
      'Deployment fxgate-core: 0 disruption budgets select its pods, not one',
    ],
    [
      'the gateways reach the cores through the fxgate-core Service on PORT',
      { 'kubernetes/gateway.yaml': [["'http://fxgate-core:8080'", "'http://fxgate-cores:8080'"]] },
      'its upstream http://fxgate-cores:8080 is no Service',
    ],
    [
      'the cores reach the gateways webhook receiver over TLS through webhook-tls, and nowhere else private',
      { 'kubernetes/webhook-tls.yaml': [['clusterIP: 10.96.200.10', 'clusterIP: 10.96.200.11']] },
      "not the Service fxgate-webhooks's fixed address alone (10.96.200.11)",
    ],
    [
      'every server starts with its settings, those of a production fleet',
      { 'README.md': [['--from-file=admin-token=', '--from-file=admin_token=']] },
      'FXGATE_ADMIN_TOKEN_FILE: cannot read the token file /run/secrets/fxgate/admin-token',
    ],
    [
      'every secret a manifest uses is one deploy/README.md makes, from the files make-secrets.sh writes',
      { 'README.md': [['create secret generic fxgate-internal-ca', 'create secret generic fxgate-internal-cert']] },
      'the secret fxgate-internal-ca is one deploy/README.md does not make',
    ],
    [
      'every container has CPU and memory requests and a memory limit above them',
      { 'kubernetes/gateway.yaml': [['memory: 512Mi', 'memory: 128Mi']] },
      'its memory request is above its limit',
    ],
    [
      'the kustomization applies every manifest, the image at the package version',
      { 'kubernetes/kustomization.yaml': [['  - networkpolicy.yaml\n', '']] },
      'the kustomization applies',
    ],
    [
      'the scrape job finds every admin listener by its port name, with the admin token',
      { 'kubernetes/prometheus-scrape.yaml': [['regex: admin', 'regex: metrics']] },
      'the scrape job keeps [], not FXGATE_ADMIN_PORT 9091',
    ],
  ];

  it.each(kubernetesCases)('kubernetes: %s (%#)', async (check, plant, expected) => {
    const model = await kubernetesFleet(plant);
    expect(kubernetesChecks[check](model)).toContainEqual(expect.stringContaining(expected));
  });

  it('every check has a planted mistake it catches', () => {
    expect(new Set(composeCases.map(([check]) => check))).toEqual(new Set(Object.keys(composeChecks)));
    expect(new Set(kubernetesCases.map(([check]) => check))).toEqual(new Set(Object.keys(kubernetesChecks)));
  });
});
