/**
 * deploy/compose held to the product: the fxgate services' commands and settings (through
 * fxgate-containers.ts), their stop grace against the drain, haproxy's public, core and webhook
 * listeners against the gateways' and cores' settings, Prometheus' targets against the admin
 * listeners, PgBouncer and Redis Sentinel against DATABASE_URL and the Sentinel settings, the
 * networks each connection needs, the secrets and the image. Each check returns its problems.
 * A fleet is read from a Compose file and the files it mounts, so a test can plant a mistake in
 * either. Reads files; runs nothing.
 */
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import ipaddr from 'ipaddr.js';
import { parse } from 'yaml';
import { z } from 'zod';

import { type Config, configuredAdminToken, drainDelayMs } from '../../src/lib/config.js';
import {
  asArgv,
  bindPort,
  COMPOSE_DIR,
  composeEnv,
  type ComposeFile,
  composeNetworksOf,
  composeSecretMounts,
  type ComposeService,
  containerArgv,
  durationMs,
  type HaproxySection,
  haproxyTimeMs,
  linesStarting,
  packageVersion,
  parseHaproxy,
  parseIni,
  readImage,
  ROOT,
  serverParam,
} from './deploy-files.js';
import {
  FLEET_WIDE_SETTINGS,
  fleetSettingProblems,
  type FxgateContainer,
  loadContainerConfig,
  parseCommand,
  type ParsedCommand,
  SERVER_COMMANDS,
  sharedSettingProblems,
  unknownSettings,
} from './fxgate-containers.js';

export interface ComposeFleet {
  readonly compose: ComposeFile;
  /** A file of deploy/compose by its path there (`haproxy.cfg`); tests may plant a changed one. */
  readonly readFile: (relative: string) => string;
  /** Where make-secrets.sh wrote the secret files. */
  readonly secretsDir: string;
}

interface Server {
  readonly name: string;
  readonly container: FxgateContainer;
  readonly command: ParsedCommand;
  readonly config: Config;
}

/** What the checks read, worked out once: the fxgate containers, parsed and loaded, and the problems met doing so. */
export interface ComposeModel {
  readonly fleet: ComposeFleet;
  readonly containers: readonly { readonly name: string; readonly container: FxgateContainer }[];
  readonly servers: readonly Server[];
  readonly loadProblems: readonly string[];
  readonly commandProblems: readonly string[];
}

/** A service built from the repository's Dockerfile, or run from its image. */
function isFxgate(service: ComposeService): boolean {
  const context = typeof service.build === 'string' ? service.build : service.build?.context;
  return (context !== undefined && path.resolve(COMPOSE_DIR, context) === ROOT) || /^fxgate:/.test(service.image ?? '');
}

/** The local file each mounted Compose secret of the service holds. */
function secretFiles(fleet: ComposeFleet, service: ComposeService): Map<string, string> {
  const files = new Map<string, string>();
  for (const [mountPath, source] of composeSecretMounts(service)) {
    const declared = fleet.compose.secrets[source];
    if (declared !== undefined) files.set(mountPath, path.join(fleet.secretsDir, path.basename(declared.file)));
  }
  return files;
}

export async function composeModel(fleet: ComposeFleet): Promise<ComposeModel> {
  const containers = Object.entries(fleet.compose.services)
    .filter(([, service]) => isFxgate(service))
    .map(([name, service]) => ({
      name,
      container: {
        where: `compose service ${name}`,
        argv: containerArgv(
          readImage(),
          service.entrypoint === undefined ? undefined : asArgv(service.entrypoint),
          service.command === undefined ? undefined : asArgv(service.command),
        ),
        env: composeEnv(service),
        files: secretFiles(fleet, service),
      },
    }));
  const servers: Server[] = [];
  const loadProblems: string[] = [];
  const commandProblems: string[] = [];
  for (const { name, container } of containers) {
    const command = await parseCommand(container);
    if ('problem' in command) {
      commandProblems.push(command.problem);
      continue;
    }
    if (!SERVER_COMMANDS.has(command.parsed.name)) continue;
    const loaded = loadContainerConfig(container);
    if ('problem' in loaded) loadProblems.push(loaded.problem);
    else servers.push({ name, container, command: command.parsed, config: loaded.config });
  }
  return { fleet, containers, servers, loadProblems, commandProblems };
}

const serversOf = (model: ComposeModel, command: string): Server[] =>
  model.servers.filter((server) => server.command.name === command);

function service(model: ComposeModel, name: string): ComposeService | undefined {
  return model.fleet.compose.services[name];
}

/** The services whose image starts with `prefix` (`haproxy:`), by name. */
function servicesOfImage(model: ComposeModel, prefix: string): [string, ComposeService][] {
  return Object.entries(model.fleet.compose.services).filter(([, each]) => (each.image ?? '').startsWith(prefix));
}

/** The file of deploy/compose a service mounts at `target`, as a path relative to deploy/compose. */
function mountedFile(each: ComposeService, target: string): string | undefined {
  for (const volume of each.volumes ?? []) {
    const [source, mountedAt] = volume.split(':');
    if (mountedAt === target && source !== undefined && source.startsWith('.')) return path.normalize(source);
  }
  return undefined;
}

/** Whether two services share a network (Compose's `default` when they name none). */
function shareNetwork(a: ComposeService, b: ComposeService): boolean {
  const theirs = composeNetworksOf(b);
  return [...composeNetworksOf(a).keys()].some((network) => theirs.has(network));
}

/** The service a host name reaches: its own name, or an alias on one of its networks. */
function serviceNamed(model: ComposeModel, host: string): [string, ComposeService] | undefined {
  return Object.entries(model.fleet.compose.services).find(
    ([name, each]) =>
      name === host || [...composeNetworksOf(each).values()].some((network) => network.aliases.includes(host)),
  );
}

function inNetworks(address: string, cidrs: readonly string[]): boolean {
  const parsed = ipaddr.parse(address);
  return cidrs.some((cidr) => {
    const [range, bits] = cidr.includes('/') ? ipaddr.parseCIDR(cidr) : [ipaddr.parse(cidr), undefined];
    if (range.kind() !== parsed.kind()) return false;
    return bits === undefined ? range.toString() === parsed.toString() : parsed.match([range, bits]);
  });
}

export const composeChecks = {
  'at least two gateways and two cores, every command a real fxgate command': (model: ComposeModel): string[] => [
    ...model.commandProblems,
    ...(['gateway', 'core'] as const)
      .filter((command) => serversOf(model, command).length < 2)
      .map((command) => `fewer than two services run fxgate ${command}`),
  ],

  'every setting is one of src/lib/config.ts': (model: ComposeModel): string[] =>
    model.containers.flatMap(({ container }) => unknownSettings(container)),

  'every server starts with its settings, those of a production fleet': (model: ComposeModel): string[] => [
    ...model.loadProblems,
    ...model.servers.flatMap((server) => fleetSettingProblems(server.container, server.config)),
    ...sharedSettingProblems(
      model.servers.map((server) => server.container),
      FLEET_WIDE_SETTINGS,
    ),
    ...sharedSettingProblems(
      serversOf(model, 'gateway').map((server) => server.container),
      ['FXGATE_GATEWAY_WEBHOOK_URL'],
    ),
    ...serversOf(model, 'gateway')
      .filter((server) => server.config.FXGATE_GATEWAY_WEBHOOK_URL === undefined)
      .map(
        (server) =>
          `${server.container.where}: FXGATE_GATEWAY_WEBHOOK_URL is unset: v3 would not reach the legacy webhooks`,
      ),
    // DATABASE_URL is a setting, not a secret: here it names PgBouncer, whose clients the internal network lets in.
    ...model.servers
      .filter(
        (server) => server.config.DATABASE_URL !== undefined && new URL(server.config.DATABASE_URL).password !== '',
      )
      .map((server) => `${server.container.where}: DATABASE_URL holds a password, in a file that is committed`),
  ],

  'the stop grace covers the drain delay and the grace': (model: ComposeModel): string[] =>
    model.servers.flatMap((server) => {
      const needed = drainDelayMs(server.config) + server.config.FXGATE_SHUTDOWN_GRACE_MS;
      const given = durationMs(service(model, server.name)?.stop_grace_period ?? '10s');
      return given >= needed
        ? []
        : [
            `${server.container.where}: stop_grace_period is ${given} ms; the drain delay and the grace take ${needed} ms`,
          ];
    }),

  'haproxy balances the gateways and the cores, checking /readyz within the drain delay': (
    model: ComposeModel,
  ): string[] => balancerProblems(model),

  'the cores reach the gateways webhook receiver over TLS through haproxy, and nowhere else private': (
    model: ComposeModel,
  ): string[] => webhookProblems(model),

  'Prometheus scrapes every admin listener with the admin token': (model: ComposeModel): string[] =>
    prometheusProblems(model),

  'PgBouncer pools transactions for DATABASE_URL in front of PostgreSQL': (model: ComposeModel): string[] =>
    pgbouncerProblems(model),

  'three Sentinels watch the primary FXGATE_REDIS_SENTINEL_NAME names, with a majority quorum': (
    model: ComposeModel,
  ): string[] => sentinelProblems(model),

  'every server shares a network with what it connects to': (model: ComposeModel): string[] => networkProblems(model),

  'every secret is a file make-secrets.sh writes, none in the repository': (model: ComposeModel): string[] =>
    secretProblems(model),

  'every fxgate service runs the image of the repository Dockerfile at the package version': (
    model: ComposeModel,
  ): string[] => imageProblems(model),
};

/** The balancer: the one haproxy service and its configuration, or the problem. */
function balancer(model: ComposeModel): { name: string; service: ComposeService; sections: HaproxySection[] } | string {
  const found = servicesOfImage(model, 'haproxy:');
  if (found.length !== 1) return `${found.length} haproxy services; the fleet has one balancer`;
  const [name, each] = found[0]!;
  const file = mountedFile(each, '/usr/local/etc/haproxy/haproxy.cfg');
  if (file === undefined) return `haproxy mounts no configuration at /usr/local/etc/haproxy/haproxy.cfg`;
  return { name, service: each, sections: parseHaproxy(model.fleet.readFile(file)) };
}

function section(sections: readonly HaproxySection[], type: string, name: string): HaproxySection | undefined {
  return sections.find((each) => each.type === type && each.name === name);
}

/** The frontend bound on `port`, and the backend it sends to. */
function route(
  sections: readonly HaproxySection[],
  port: number,
): { frontend: HaproxySection; backend: HaproxySection | undefined } | undefined {
  const frontend = sections.find(
    (each) => each.type === 'frontend' && linesStarting(each, 'bind').some((line) => bindPort(line) === port),
  );
  if (frontend === undefined) return undefined;
  const backendName = linesStarting(frontend, 'default_backend')[0]?.[1];
  return { frontend, backend: backendName === undefined ? undefined : section(sections, 'backend', backendName) };
}

/** The problems of a backend that must balance `servers` (each `host:port` with its drain delay), checked on /readyz. */
export function backendProblems(
  sections: readonly HaproxySection[],
  backend: HaproxySection,
  servers: readonly { readonly address: string; readonly drainDelayMs: number }[],
): string[] {
  const problems: string[] = [];
  const say = (text: string): void => void problems.push(`haproxy backend ${backend.name}: ${text}`);
  const defaults = sections.find((each) => each.type === 'defaults');
  const setting = (...words: string[]): (readonly string[])[] => [
    ...linesStarting(backend, ...words),
    ...(defaults === undefined ? [] : linesStarting(defaults, ...words)),
  ];
  const lines = linesStarting(backend, 'server');
  const templates = linesStarting(backend, 'server-template');
  const addresses = [...lines.map((line) => line[2]), ...templates.map((line) => line[3])];
  const expected = servers.map((server) => server.address).sort();
  if (JSON.stringify([...addresses].sort()) !== JSON.stringify(expected))
    say(`its servers are ${JSON.stringify(addresses.sort())}, not ${JSON.stringify(expected)}`);
  if (!setting('option', 'httpchk').some((line) => line.slice(2).join(' ') === 'GET /readyz'))
    say('it does not check GET /readyz (option httpchk GET /readyz)');
  if (!setting('http-check', 'expect', 'status').some((line) => line[3] === '200'))
    say('its check does not expect status 200');
  const defaultServer = setting('default-server')[0] ?? [];
  for (const line of [...lines, ...templates]) {
    const param = (keyword: string, fallback: string): string =>
      serverParam(line, keyword) ?? serverParam(defaultServer, keyword) ?? fallback;
    if (!line.includes('check') && !defaultServer.includes('check')) say(`${line[1]} is not checked`);
    // haproxy's defaults: a check every 2 s, three failures.
    const outAfter = haproxyTimeMs(param('inter', '2s')) * Number(param('fall', '3'));
    for (const server of servers)
      if (!(outAfter < server.drainDelayMs))
        say(
          `${line[1]} is taken out ${outAfter} ms after its /readyz turns 503, not within the drain delay of ${server.drainDelayMs} ms`,
        );
  }
  const retries = Number(setting('retries')[0]?.[1] ?? 3);
  if (!(retries >= 1)) say('a connection that failed is not tried again (retries)');
  const retryOn = setting('retry-on')[0]?.slice(1) ?? ['conn-failure'];
  if (!retryOn.includes('conn-failure')) say('retry-on leaves out conn-failure');
  if (setting('option', 'redispatch').length === 0) say('a retry goes back to the same server (option redispatch)');
  return problems;
}

function balancerProblems(model: ComposeModel): string[] {
  const found = balancer(model);
  if (typeof found === 'string') return [found];
  const problems: string[] = [];
  const gateways = serversOf(model, 'gateway');
  const cores = serversOf(model, 'core');
  const targets = (servers: readonly Server[]) =>
    servers.map((server) => ({
      address: `${server.name}:${server.config.PORT}`,
      drainDelayMs: drainDelayMs(server.config),
    }));
  const published = (found.service.ports ?? []).map((port) => Number(String(port).split(':').at(-1)));
  if (published.length === 0) problems.push('haproxy publishes no port');
  for (const port of published) {
    const entry = route(found.sections, port);
    if (entry?.backend === undefined) problems.push(`haproxy publishes ${port}, where no frontend sends to a backend`);
    else problems.push(...backendProblems(found.sections, entry.backend, targets(gateways)));
  }
  for (const gateway of gateways) {
    const upstream = new URL(String(gateway.command.options.upstream));
    const where = serviceNamed(model, upstream.hostname);
    if (where?.[0] !== found.name) {
      problems.push(`${gateway.container.where}: its upstream ${upstream.origin} is not haproxy`);
      continue;
    }
    const toCores = route(found.sections, Number(upstream.port || 80));
    if (toCores?.backend === undefined) problems.push(`haproxy has no frontend for the upstream ${upstream.origin}`);
    else problems.push(...backendProblems(found.sections, toCores.backend, targets(cores)));
  }
  const fixed = [...composeNetworksOf(found.service).values()]
    .map((network) => network.ipv4Address)
    .filter((each) => each !== undefined);
  for (const server of model.servers) {
    if (!fixed.some((each) => inNetworks(each, server.config.FXGATE_TRUSTED_PROXIES)))
      problems.push(
        `${server.container.where}: FXGATE_TRUSTED_PROXIES leaves out haproxy's address (${fixed.join(', ') || 'none fixed'}): every client would be haproxy`,
      );
  }
  return [...new Set(problems)];
}

function webhookProblems(model: ComposeModel): string[] {
  const found = balancer(model);
  if (typeof found === 'string') return [found];
  const problems: string[] = [];
  const cores = serversOf(model, 'core');
  for (const gateway of serversOf(model, 'gateway')) {
    const text = gateway.config.FXGATE_GATEWAY_WEBHOOK_URL;
    if (text === undefined) continue;
    const url = new URL(text);
    const say = (what: string): void =>
      void problems.push(`${gateway.container.where}: FXGATE_GATEWAY_WEBHOOK_URL ${text}: ${what}`);
    if (url.protocol !== 'https:') say('live books are registered over https only');
    const [name] = serviceNamed(model, url.hostname) ?? [];
    if (name !== found.name) {
      say('its host is not haproxy');
      continue;
    }
    const entry = route(found.sections, Number(url.port || 443));
    if (entry === undefined) {
      say('no haproxy frontend listens on its port');
      continue;
    }
    const publicBackend = route(
      found.sections,
      Number(
        String(found.service.ports?.[0] ?? '')
          .split(':')
          .at(-1),
      ),
    )?.backend;
    if (entry.backend === undefined || entry.backend !== publicBackend)
      say("haproxy's frontend there does not send to the gateways");
    const bind = linesStarting(entry.frontend, 'bind')[0] ?? [];
    const crt = serverParam(bind, 'crt');
    if (!bind.includes('ssl') || crt === undefined) {
      say('the frontend on its port does not terminate TLS');
      continue;
    }
    for (const denied of linesStarting(entry.frontend, 'http-request', 'deny')) {
      const allowed = denied[denied.indexOf('path_beg') + 1];
      if (denied.includes('unless') && allowed !== undefined && !`${url.pathname}/`.startsWith(allowed))
        say(`haproxy refuses its path, allowing only ${allowed}`);
    }
    const certificateFile = secretFiles(model.fleet, found.service).get(crt);
    if (certificateFile === undefined || !existsSync(certificateFile)) {
      say(`haproxy's certificate ${crt} is no secret it mounts`);
      continue;
    }
    const certificate = new X509Certificate(readFileSync(certificateFile));
    if (certificate.checkHost(url.hostname) === undefined) say(`haproxy's certificate is not for ${url.hostname}`);
    const hostNetworks = [...composeNetworksOf(found.service).values()].filter(
      (network) => network.aliases.includes(url.hostname) || url.hostname === found.name,
    );
    const address = hostNetworks.map((network) => network.ipv4Address).find((each) => each !== undefined);
    for (const core of cores) {
      const sayCore = (what: string): void => void problems.push(`${core.container.where}: ${what}`);
      const allowed = core.config.FXGATE_WEBHOOK_ALLOWED_NETWORKS;
      if (address === undefined || JSON.stringify(allowed) !== JSON.stringify([`${address}/32`]))
        sayCore(
          `FXGATE_WEBHOOK_ALLOWED_NETWORKS is ${JSON.stringify(allowed)}, not haproxy's address alone (${address ?? 'none fixed'}) where ${url.hostname} resolves`,
        );
      const caFile = core.container.files.get(core.container.env.NODE_EXTRA_CA_CERTS ?? '');
      if (caFile === undefined) sayCore('NODE_EXTRA_CA_CERTS names no CA file it mounts: the webhooks TLS would fail');
      else if (!certificate.verify(new X509Certificate(readFileSync(caFile)).publicKey))
        sayCore(`the CA of NODE_EXTRA_CA_CERTS did not sign haproxy's certificate`);
    }
  }
  return [...new Set(problems)];
}

const prometheusFile = z.looseObject({
  scrape_configs: z.array(
    z.looseObject({
      job_name: z.string(),
      authorization: z.looseObject({ type: z.string().optional(), credentials_file: z.string().optional() }).optional(),
      static_configs: z.array(z.looseObject({ targets: z.array(z.string()) })).default([]),
    }),
  ),
});

function prometheusProblems(model: ComposeModel): string[] {
  const found = servicesOfImage(model, 'prom/prometheus:');
  if (found.length !== 1) return [`${found.length} Prometheus services, not one`];
  const [, prometheus] = found[0]!;
  const file = mountedFile(prometheus, '/etc/prometheus/prometheus.yml');
  if (file === undefined) return ['Prometheus mounts no /etc/prometheus/prometheus.yml'];
  const config = prometheusFile.parse(parse(model.fleet.readFile(file)));
  const problems: string[] = [];
  const scraped = new Map<string, string | undefined>();
  for (const job of config.scrape_configs)
    for (const target of job.static_configs.flatMap((each) => each.targets))
      scraped.set(target, job.authorization?.credentials_file);
  const mounts = composeSecretMounts(prometheus);
  for (const server of model.servers) {
    const target = `${server.name}:${String(server.config.FXGATE_ADMIN_PORT)}`;
    if (!scraped.has(target)) {
      problems.push(`Prometheus does not scrape ${target}, ${server.container.where}'s admin listener`);
      continue;
    }
    if (configuredAdminToken(server.config) === undefined) continue;
    const credentials = scraped.get(target);
    const tokenSecret = composeSecretMounts(service(model, server.name)!).get(
      server.container.env.FXGATE_ADMIN_TOKEN_FILE ?? '',
    );
    if (credentials === undefined || mounts.get(credentials) !== tokenSecret)
      problems.push(
        `Prometheus scrapes ${target} without the secret ${tokenSecret ?? '(none)'} that holds its FXGATE_ADMIN_TOKEN_FILE`,
      );
    if (!shareNetwork(prometheus, service(model, server.name)!))
      problems.push(`Prometheus shares no network with ${target}`);
  }
  return problems;
}

function pgbouncerProblems(model: ComposeModel): string[] {
  const problems: string[] = [];
  const urls = new Set(model.servers.map((server) => server.config.DATABASE_URL).filter((url) => url !== undefined));
  for (const text of urls) {
    const url = new URL(text);
    const say = (what: string): void => void problems.push(`DATABASE_URL ${text}: ${what}`);
    const pgbouncer = service(model, url.hostname);
    if (pgbouncer === undefined) {
      say('its host is no service');
      continue;
    }
    const build = typeof pgbouncer.build === 'string' ? pgbouncer.build : pgbouncer.build?.context;
    const dockerfile = build === undefined ? '' : model.fleet.readFile(path.join(build, 'Dockerfile'));
    const iniPath = /CMD \["pgbouncer", "([^"]+)"\]/.exec(dockerfile)?.[1];
    const iniFile = iniPath === undefined ? undefined : mountedFile(pgbouncer, iniPath);
    if (iniFile === undefined) {
      say(
        `${url.hostname} is not the PgBouncer image of deploy/compose with its pgbouncer.ini mounted where it reads it`,
      );
      continue;
    }
    const ini = parseIni(model.fleet.readFile(iniFile));
    const settings = ini.get('pgbouncer') ?? new Map<string, string>();
    if (settings.get('pool_mode') !== 'transaction')
      say(`PgBouncer's pool_mode is ${settings.get('pool_mode')}, not transaction`);
    if (settings.get('listen_port') !== (url.port || '5432'))
      say(`PgBouncer listens on ${settings.get('listen_port')}`);
    const databaseName = url.pathname.slice(1);
    const database = ini.get('databases')?.get(databaseName);
    if (database === undefined) {
      say(`PgBouncer has no database ${databaseName}`);
      continue;
    }
    const target = Object.fromEntries(database.split(/\s+/).map((pair) => pair.split('=') as [string, string]));
    const postgres = service(model, target.host ?? '');
    const postgresEnv = postgres === undefined ? {} : composeEnv(postgres);
    if (
      postgres === undefined ||
      postgresEnv.POSTGRES_DB !== target.dbname ||
      postgresEnv.POSTGRES_USER !== url.username
    )
      say(`PgBouncer's ${databaseName} (${database}) is not the database and user the postgres service makes`);
    const authFile = settings.get('auth_file');
    const userlist = authFile === undefined ? undefined : secretFiles(model.fleet, pgbouncer).get(authFile);
    if (userlist === undefined || !readFileSync(userlist, 'utf8').includes(`"${url.username}" `))
      say(`PgBouncer's auth_file ${authFile} is no secret it mounts listing ${url.username}`);
    const clients = model.containers.length * 20;
    if (!(Number(settings.get('max_client_conn')) >= clients))
      say(
        `PgBouncer's max_client_conn ${settings.get('max_client_conn')} is under 20 for each of the ${model.containers.length} fxgate services`,
      );
  }
  return problems;
}

const isSentinel = (each: ComposeService): boolean => asArgv(each.command).join(' ').includes('redis-sentinel');
const isRedisNode = (each: ComposeService): boolean =>
  (each.image ?? '').startsWith('redis:') && asArgv(each.command).join(' ').includes('redis-server');

function sentinelProblems(model: ComposeModel): string[] {
  const problems: string[] = [];
  const sentinels = Object.entries(model.fleet.compose.services).filter(([, each]) => isSentinel(each));
  const nodes = Object.entries(model.fleet.compose.services).filter(([, each]) => isRedisNode(each));
  if (sentinels.length < 3) problems.push(`${sentinels.length} Sentinels; a quorum needs three on their own`);
  const configs = sentinels.map(([name, each]) => {
    const file = mountedFile(each, '/usr/local/etc/redis/sentinel.conf');
    return {
      name,
      lines:
        file === undefined
          ? []
          : model.fleet
              .readFile(file)
              .split('\n')
              .map((line) => line.trim().split(/\s+/)),
    };
  });
  for (const server of model.servers) {
    const listed = (server.config.FXGATE_REDIS_SENTINELS ?? []).map((each) => `${each.host}:${each.port}`).sort();
    const expected = configs
      .map(({ name, lines }) => `${name}:${lines.find((line) => line[0] === 'port')?.[1] ?? '26379'}`)
      .sort();
    if (JSON.stringify(listed) !== JSON.stringify(expected))
      problems.push(
        `${server.container.where}: FXGATE_REDIS_SENTINELS lists ${listed.join(',')}, not the Sentinels ${expected.join(',')}`,
      );
  }
  const names = new Set(model.servers.map((server) => server.config.FXGATE_REDIS_SENTINEL_NAME));
  for (const { name, lines } of configs) {
    const monitor = lines.find((line) => line[0] === 'sentinel' && line[1] === 'monitor');
    if (monitor === undefined) {
      problems.push(`${name} watches no primary (sentinel monitor)`);
      continue;
    }
    const [, , group, host, port, quorum] = monitor;
    if (!names.has(group) || names.size !== 1)
      problems.push(`${name} watches ${group}, the servers name ${[...names].join(', ')} (FXGATE_REDIS_SENTINEL_NAME)`);
    if (!nodes.some(([node]) => node === host)) problems.push(`${name} watches ${host}, which is no Redis service`);
    const votes = Number(quorum);
    if (!(votes > sentinels.length / 2 && votes <= sentinels.length))
      problems.push(`${name}'s quorum ${quorum} is not a majority of the ${sentinels.length} Sentinels`);
    const replicas = nodes.filter(([, each]) => asArgv(each.command).join(' ').includes(`replicaof ${host} ${port}`));
    if (replicas.length === 0) problems.push(`no Redis service replicates the primary ${host}:${port}`);
  }
  for (const [name, each] of nodes) {
    const file = mountedFile(each, '/usr/local/etc/redis/redis.conf');
    const conf = file === undefined ? '' : model.fleet.readFile(file);
    if (!/^maxmemory-policy noeviction$/m.test(conf))
      problems.push(`${name}: its keys may be evicted (maxmemory-policy noeviction)`);
  }
  return [...new Set(problems)];
}

function networkProblems(model: ComposeModel): string[] {
  const problems: string[] = [];
  const redis = Object.entries(model.fleet.compose.services).filter(([, each]) => isRedisNode(each));
  for (const server of model.servers) {
    const own = service(model, server.name)!;
    const hosts = [
      server.config.DATABASE_URL === undefined ? undefined : new URL(server.config.DATABASE_URL).hostname,
      ...(server.config.FXGATE_REDIS_SENTINELS ?? []).map((each) => each.host),
      server.command.name === 'gateway' ? new URL(String(server.command.options.upstream)).hostname : undefined,
    ].filter((host) => host !== undefined);
    for (const host of hosts) {
      const [name, target] = serviceNamed(model, host) ?? [];
      if (target === undefined) problems.push(`${server.container.where}: ${host} is no service`);
      else if (!shareNetwork(own, target)) problems.push(`${server.container.where}: shares no network with ${name}`);
    }
    // The primary a Sentinel names is one of the data nodes.
    for (const [name, node] of redis)
      if (!shareNetwork(own, node))
        problems.push(`${server.container.where}: shares no network with ${name}, a Redis primary to be`);
  }
  for (const [name, network] of Object.entries(model.fleet.compose.networks))
    if (name === 'data' && network?.internal !== true) problems.push('the data network is not internal');
  return problems;
}

function secretProblems(model: ComposeModel): string[] {
  const problems: string[] = [];
  for (const [name, each] of Object.entries(model.fleet.compose.services))
    for (const [, source] of composeSecretMounts(each))
      if (model.fleet.compose.secrets[source] === undefined)
        problems.push(`${name} mounts the undeclared secret ${source}`);
  for (const [name, declared] of Object.entries(model.fleet.compose.secrets)) {
    if (path.dirname(path.normalize(declared.file)) !== 'secrets')
      problems.push(`the secret ${name} is ${declared.file}, outside ./secrets`);
    if (!existsSync(path.join(model.fleet.secretsDir, path.basename(declared.file))))
      problems.push(`the secret ${name} (${declared.file}) is no file make-secrets.sh writes`);
  }
  const ignored = readFileSync(path.join(ROOT, '.gitignore'), 'utf8').split('\n');
  if (!ignored.includes('deploy/compose/secrets/'))
    problems.push('.gitignore does not keep deploy/compose/secrets/ out');
  const dockerIgnored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
  if (!dockerIgnored.includes('deploy'))
    problems.push('.dockerignore sends deploy/ (and its secrets) into the image build');
  return problems;
}

function imageProblems(model: ComposeModel): string[] {
  const expected = `fxgate:${packageVersion()}`;
  const problems: string[] = [];
  for (const { name } of model.containers) {
    const each = service(model, name)!;
    const context = typeof each.build === 'string' ? each.build : each.build?.context;
    if (context === undefined || path.resolve(COMPOSE_DIR, context) !== ROOT)
      problems.push(`${name} is not built from the repository's Dockerfile (build: ../..)`);
    if (each.image !== expected) problems.push(`${name} is tagged ${each.image}, not ${expected}`);
  }
  if (!existsSync(path.join(ROOT, 'Dockerfile'))) problems.push('the repository has no Dockerfile');
  return problems;
}
