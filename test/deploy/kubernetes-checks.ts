/**
 * deploy/kubernetes held to the product: the fxgate containers' commands and settings (through
 * fxgate-containers.ts, the ConfigMap and the secrets the deploy README makes), probes and ports
 * against PORT and FXGATE_ADMIN_PORT, grace periods against the drain, rollouts and disruption
 * budgets, every selector against the pods it must select, the gateways' upstream and webhook
 * URL against the Services, webhook-tls's haproxy against both, resources, the kustomization and
 * the scrape job. Each check returns its problems. Reads files; runs nothing.
 */
import { X509Certificate } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { parse } from 'yaml';
import { z } from 'zod';

import { type Config, drainDelayMs } from '../../src/lib/config.js';
import { backendProblems } from './compose-checks.js';
import {
  bindPort,
  configMapSchema,
  type Container,
  containerArgv,
  containerPort,
  type Deployment,
  deploymentSchema,
  type DocumentedSecret,
  KUBERNETES_DIR,
  type KubernetesObject,
  linesStarting,
  networkPolicySchema,
  packageVersion,
  parseHaproxy,
  pdbSchema,
  readImage,
  selects,
  serverParam,
  type Service,
  serviceSchema,
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

export interface KubernetesFleet {
  readonly objects: readonly KubernetesObject[];
  readonly kustomization: {
    readonly namespace: string;
    readonly resources: readonly string[];
    readonly images: readonly { readonly name: string; readonly newName?: string; readonly newTag: string }[];
  };
  /** The secrets deploy/README.md makes, and where make-secrets.sh wrote the files they are made from. */
  readonly secrets: readonly DocumentedSecret[];
  readonly secretsDir: string;
  /** prometheus-scrape.yaml's text. */
  readonly scrapeConfig: string;
}

interface Server {
  readonly deployment: Deployment;
  readonly container: Container;
  readonly fxgate: FxgateContainer;
  readonly command: ParsedCommand;
  readonly config: Config;
}

export interface KubernetesModel {
  readonly fleet: KubernetesFleet;
  readonly deployments: readonly Deployment[];
  readonly services: readonly Service[];
  readonly fxgate: readonly {
    readonly deployment: Deployment;
    readonly container: Container;
    readonly fxgate: FxgateContainer;
  }[];
  readonly servers: readonly Server[];
  readonly loadProblems: readonly string[];
  readonly commandProblems: readonly string[];
}

const FXGATE_IMAGE = 'fxgate';

function objectsOf<T>(fleet: KubernetesFleet, kind: string, schema: z.ZodType<T>): T[] {
  return fleet.objects.filter((object) => object.kind === kind).map((object) => schema.parse(object.body));
}

/** The container's environment as the kubelet builds it: ConfigMaps first, then its own, secrets as the README makes them. */
function containerEnv(
  fleet: KubernetesFleet,
  container: Container,
  where: string,
  problems: string[],
): Record<string, string> {
  const configMaps = objectsOf(fleet, 'ConfigMap', configMapSchema);
  const env: Record<string, string> = {};
  for (const source of container.envFrom) {
    if (source.configMapRef === undefined) continue;
    const configMap = configMaps.find((each) => each.metadata.name === source.configMapRef!.name);
    if (configMap === undefined)
      problems.push(`${where}: envFrom names the ConfigMap ${source.configMapRef.name}, which no manifest makes`);
    else Object.assign(env, configMap.data);
  }
  for (const variable of container.env) {
    const ref = variable.valueFrom?.secretKeyRef;
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (ref !== undefined) {
      const value = fleet.secrets.find((secret) => secret.name === ref.name)?.literals.get(ref.key);
      if (value !== undefined) env[variable.name] = value;
      else if (ref.optional !== true)
        problems.push(
          `${where}: ${variable.name} comes from the secret ${ref.name}'s ${ref.key}, which deploy/README.md does not make`,
        );
    }
  }
  return env;
}

/** The local file behind each file a container mounts from a secret the README makes from files. */
function mountedFiles(fleet: KubernetesFleet, deployment: Deployment, container: Container): Map<string, string> {
  const files = new Map<string, string>();
  for (const mount of container.volumeMounts) {
    const volume = deployment.spec.template.spec.volumes.find((each) => each.name === mount.name);
    const secret = fleet.secrets.find((each) => each.name === volume?.secret?.secretName);
    for (const [key, file] of secret?.files ?? [])
      files.set(`${mount.mountPath}/${key}`, path.join(fleet.secretsDir, path.basename(file)));
  }
  return files;
}

export async function kubernetesModel(fleet: KubernetesFleet): Promise<KubernetesModel> {
  const deployments = objectsOf(fleet, 'Deployment', deploymentSchema);
  const services = objectsOf(fleet, 'Service', serviceSchema);
  const fxgate: { deployment: Deployment; container: Container; fxgate: FxgateContainer }[] = [];
  const servers: Server[] = [];
  const loadProblems: string[] = [];
  const commandProblems: string[] = [];
  for (const deployment of deployments) {
    for (const container of deployment.spec.template.spec.containers) {
      if (container.image !== FXGATE_IMAGE) continue;
      const where = `Deployment ${deployment.metadata.name} container ${container.name}`;
      const each: FxgateContainer = {
        where,
        argv: containerArgv(readImage(), container.command, container.args),
        env: containerEnv(fleet, container, where, loadProblems),
        files: mountedFiles(fleet, deployment, container),
      };
      fxgate.push({ deployment, container, fxgate: each });
      const command = await parseCommand(each);
      if ('problem' in command) {
        commandProblems.push(command.problem);
        continue;
      }
      if (!SERVER_COMMANDS.has(command.parsed.name)) continue;
      const loaded = loadContainerConfig(each);
      if ('problem' in loaded) loadProblems.push(loaded.problem);
      else servers.push({ deployment, container, fxgate: each, command: command.parsed, config: loaded.config });
    }
  }
  return { fleet, deployments, services, fxgate, servers, loadProblems, commandProblems };
}

const serversOf = (model: KubernetesModel, command: string): Server[] =>
  model.servers.filter((server) => server.command.name === command);

const podLabels = (deployment: Deployment): Record<string, string> => deployment.spec.template.metadata.labels;

function selected(model: KubernetesModel, selector: Readonly<Record<string, string>>): Deployment[] {
  return model.deployments.filter((deployment) => selects(selector, podLabels(deployment)));
}

/** The Service a cluster name reaches (`name`, `name.namespace`, `name.namespace.svc.cluster.local`). */
function serviceOfHost(model: KubernetesModel, host: string): Service | undefined {
  const namespace = model.fleet.kustomization.namespace;
  return model.services.find((service) =>
    [
      service.metadata.name,
      `${service.metadata.name}.${namespace}`,
      `${service.metadata.name}.${namespace}.svc`,
      `${service.metadata.name}.${namespace}.svc.cluster.local`,
    ].includes(host),
  );
}

/** The container port a Service port reaches on the Deployment it selects, with that Deployment and container. */
function servicePortTarget(
  model: KubernetesModel,
  service: Service,
  port: number,
): { deployment: Deployment; container: Container; port: number } | string {
  const entry = service.spec.ports.find((each) => each.port === port);
  if (entry === undefined) return `the Service ${service.metadata.name} has no port ${port}`;
  const targets = selected(model, service.spec.selector);
  if (targets.length !== 1)
    return `the Service ${service.metadata.name} selects ${targets.length} Deployments, not one`;
  const deployment = targets[0]!;
  for (const container of deployment.spec.template.spec.containers) {
    const reached = containerPort(container, entry.targetPort ?? entry.port);
    if (reached !== undefined) return { deployment, container, port: reached };
  }
  return `the Service ${service.metadata.name}'s port ${port} reaches no port of ${deployment.metadata.name}`;
}

function memoryBytes(quantity: string | number | undefined): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?$/.exec(String(quantity ?? ''));
  if (match === null) return Number.NaN;
  const factor = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, K: 1e3, M: 1e6, G: 1e9 }[match[2] ?? ''] ?? 1;
  return Number(match[1]) * factor;
}

export const kubernetesChecks = {
  'two or more replicas of the gateway and the core, every command a real fxgate command': (
    model: KubernetesModel,
  ): string[] => [
    ...model.commandProblems,
    ...(['gateway', 'core'] as const).flatMap((command) => {
      const found = serversOf(model, command);
      if (found.length === 0) return [`no Deployment runs fxgate ${command}`];
      return found
        .filter((server) => server.deployment.spec.replicas < 2)
        .map((server) => `${server.fxgate.where}: ${server.deployment.spec.replicas} replica`);
    }),
  ],

  'every setting is one of src/lib/config.ts': (model: KubernetesModel): string[] =>
    model.fxgate.flatMap(({ fxgate }) => unknownSettings(fxgate)),

  'every server starts with its settings, those of a production fleet': (model: KubernetesModel): string[] => [
    ...model.loadProblems,
    ...model.servers.flatMap((server) => fleetSettingProblems(server.fxgate, server.config)),
    ...sharedSettingProblems(
      model.servers.map((server) => server.fxgate),
      FLEET_WIDE_SETTINGS,
    ),
  ],

  'probes: readiness on /readyz within the drain delay, liveness on /healthz, on PORT': (
    model: KubernetesModel,
  ): string[] =>
    model.servers.flatMap(({ fxgate, container, config }) => {
      const problems: string[] = [];
      const say = (text: string): void => void problems.push(`${fxgate.where}: ${text}`);
      const probes = [
        ['readinessProbe', '/readyz'],
        ['livenessProbe', '/healthz'],
        ['startupProbe', '/healthz'],
      ] as const;
      for (const [kind, expected] of probes) {
        const probe = container[kind];
        if (probe === undefined) {
          if (kind !== 'startupProbe') say(`no ${kind}`);
          continue;
        }
        if (probe.httpGet?.path !== expected) say(`its ${kind} asks ${probe.httpGet?.path}, not ${expected}`);
        const port = probe.httpGet === undefined ? undefined : containerPort(container, probe.httpGet.port);
        if (port !== config.PORT)
          say(`its ${kind} asks port ${String(probe.httpGet?.port)} (${port}), not PORT ${config.PORT}`);
      }
      const readiness = container.readinessProbe;
      const outAfter = (readiness?.periodSeconds ?? 10) * (readiness?.failureThreshold ?? 3) * 1000;
      if (!(outAfter < drainDelayMs(config)))
        say(
          `its readiness probe takes ${outAfter} ms to see a stop, not within the drain delay of ${drainDelayMs(config)} ms`,
        );
      if (!container.ports.some((port) => port.containerPort === config.PORT))
        say(`no container port is PORT ${config.PORT}`);
      if (!container.ports.some((port) => port.containerPort === config.FXGATE_ADMIN_PORT))
        say(`no container port is FXGATE_ADMIN_PORT ${String(config.FXGATE_ADMIN_PORT)}`);
      return problems;
    }),

  'the grace period covers the drain delay and the grace, no preStop, rollouts keep every replica': (
    model: KubernetesModel,
  ): string[] =>
    model.servers.flatMap(({ fxgate, deployment, container, config }) => {
      const problems: string[] = [];
      const needed = drainDelayMs(config) + config.FXGATE_SHUTDOWN_GRACE_MS;
      const given = (deployment.spec.template.spec.terminationGracePeriodSeconds ?? 30) * 1000;
      if (given < needed)
        problems.push(
          `${fxgate.where}: terminationGracePeriodSeconds is ${given / 1000}; the drain delay and the grace take ${needed / 1000} s`,
        );
      if (container.lifecycle?.preStop !== undefined)
        problems.push(
          `${fxgate.where}: a preStop, which the drain delay makes needless and the grace period does not cover`,
        );
      const rolling = deployment.spec.strategy?.rollingUpdate;
      if (deployment.spec.strategy?.type !== 'RollingUpdate' || rolling?.maxUnavailable !== 0)
        problems.push(
          `${fxgate.where}: a rollout may take a replica away before its successor is ready (maxUnavailable: 0)`,
        );
      return problems;
    }),

  'every selector selects its pods: Deployments, Services, disruption budgets, network policies': (
    model: KubernetesModel,
  ): string[] => selectorProblems(model),

  'the gateways reach the cores through the fxgate-core Service on PORT': (model: KubernetesModel): string[] =>
    serversOf(model, 'gateway').flatMap(({ fxgate, command }) => {
      const upstream = new URL(String(command.options.upstream));
      const service = serviceOfHost(model, upstream.hostname);
      if (service === undefined) return [`${fxgate.where}: its upstream ${upstream.origin} is no Service`];
      const target = servicePortTarget(model, service, Number(upstream.port || 80));
      if (typeof target === 'string') return [`${fxgate.where}: its upstream: ${target}`];
      const core = serversOf(model, 'core').find((server) => server.deployment === target.deployment);
      if (core === undefined)
        return [`${fxgate.where}: its upstream reaches ${target.deployment.metadata.name}, which runs no core`];
      return target.port === core.config.PORT
        ? []
        : [`${fxgate.where}: its upstream reaches port ${target.port}, not the core's PORT`];
    }),

  'the cores reach the gateways webhook receiver over TLS through webhook-tls, and nowhere else private': (
    model: KubernetesModel,
  ): string[] => webhookProblems(model),

  'every secret a manifest uses is one deploy/README.md makes, from the files make-secrets.sh writes': (
    model: KubernetesModel,
  ): string[] => secretProblems(model),

  'every container has CPU and memory requests and a memory limit above them': (model: KubernetesModel): string[] =>
    model.deployments.flatMap((deployment) =>
      deployment.spec.template.spec.containers.flatMap((container) => {
        const { requests = {}, limits = {} } = container.resources ?? {};
        const where = `Deployment ${deployment.metadata.name} container ${container.name}`;
        if (requests.cpu === undefined || requests.memory === undefined || limits.memory === undefined)
          return [`${where}: requests cpu and memory and a memory limit`];
        return memoryBytes(requests.memory) <= memoryBytes(limits.memory)
          ? []
          : [`${where}: its memory request is above its limit`];
      }),
    ),

  'the kustomization applies every manifest, the image at the package version': (model: KubernetesModel): string[] =>
    kustomizationProblems(model),

  'the scrape job finds every admin listener by its port name, with the admin token': (
    model: KubernetesModel,
  ): string[] => scrapeProblems(model),
};

function selectorProblems(model: KubernetesModel): string[] {
  const problems: string[] = [];
  for (const deployment of model.deployments) {
    if (!selects(deployment.spec.selector.matchLabels, podLabels(deployment)))
      problems.push(`Deployment ${deployment.metadata.name}: its selector does not select its own pods`);
    const budgets = objectsOf(model.fleet, 'PodDisruptionBudget', pdbSchema).filter((pdb) =>
      selects(pdb.spec.selector.matchLabels, podLabels(deployment)),
    );
    if (budgets.length !== 1)
      problems.push(
        `Deployment ${deployment.metadata.name}: ${budgets.length} disruption budgets select its pods, not one`,
      );
    for (const pdb of budgets) {
      const { minAvailable, maxUnavailable } = pdb.spec;
      const keepsOneOut =
        typeof minAvailable === 'number'
          ? minAvailable < deployment.spec.replicas
          : maxUnavailable !== undefined && maxUnavailable !== 0;
      if (!keepsOneOut || (typeof minAvailable === 'number' && minAvailable < 1))
        problems.push(
          `PodDisruptionBudget ${pdb.metadata.name}: with ${deployment.spec.replicas} replicas it either blocks every drain or lets all go`,
        );
    }
  }
  for (const service of model.services) {
    const targets = selected(model, service.spec.selector);
    if (targets.length !== 1) {
      problems.push(`Service ${service.metadata.name} selects ${targets.length} Deployments, not one`);
      continue;
    }
    for (const port of service.spec.ports) {
      const target = servicePortTarget(model, service, port.port);
      if (typeof target === 'string') problems.push(target);
    }
  }
  for (const policy of objectsOf(model.fleet, 'NetworkPolicy', networkPolicySchema)) {
    const targets = selected(model, policy.spec.podSelector.matchLabels);
    if (targets.length === 0) problems.push(`NetworkPolicy ${policy.metadata.name} selects no pods`);
    for (const rule of policy.spec.ingress) {
      for (const peer of rule.from)
        if (peer.podSelector !== undefined && selected(model, peer.podSelector.matchLabels).length === 0)
          problems.push(`NetworkPolicy ${policy.metadata.name}: a peer selects no pods`);
      for (const { port } of rule.ports)
        for (const target of targets)
          if (!target.spec.template.spec.containers.some((container) => containerPort(container, port) !== undefined))
            problems.push(`NetworkPolicy ${policy.metadata.name}: ${target.metadata.name} has no port ${port}`);
    }
  }
  // A core believing X-Forwarded-For from the whole pod network lets only gateways reach its public port.
  for (const core of serversOf(model, 'core')) {
    if (core.config.FXGATE_TRUSTED_PROXIES.length === 0) continue;
    const policies = objectsOf(model.fleet, 'NetworkPolicy', networkPolicySchema).filter((policy) =>
      selects(policy.spec.podSelector.matchLabels, podLabels(core.deployment)),
    );
    const gateways = new Set(serversOf(model, 'gateway').map((server) => server.deployment));
    const open =
      policies.length === 0 ||
      policies.some((policy) =>
        policy.spec.ingress.some(
          (rule) =>
            (rule.ports.length === 0 ||
              rule.ports.some(({ port }) => containerPort(core.container, port) === core.config.PORT)) &&
            (rule.from.length === 0 ||
              rule.from.some(
                (peer) =>
                  peer.podSelector === undefined ||
                  selected(model, peer.podSelector.matchLabels).some((each) => !gateways.has(each)),
              )),
        ),
      );
    if (open)
      problems.push(
        `${core.fxgate.where}: believes X-Forwarded-For (FXGATE_TRUSTED_PROXIES) from pods other than the gateways`,
      );
  }
  return problems;
}

function webhookProblems(model: KubernetesModel): string[] {
  const problems: string[] = [];
  const cores = serversOf(model, 'core');
  for (const gateway of serversOf(model, 'gateway')) {
    const text = gateway.config.FXGATE_GATEWAY_WEBHOOK_URL;
    const say = (what: string): void =>
      void problems.push(`${gateway.fxgate.where}: FXGATE_GATEWAY_WEBHOOK_URL ${text}: ${what}`);
    if (text === undefined) {
      say('unset: v3 would not reach the legacy webhooks');
      continue;
    }
    const url = new URL(text);
    if (url.protocol !== 'https:') say('live books are registered over https only');
    const service = serviceOfHost(model, url.hostname);
    if (service === undefined) {
      say('its host is no Service');
      continue;
    }
    const address = service.spec.clusterIP;
    for (const core of cores)
      if (
        address === undefined ||
        JSON.stringify(core.config.FXGATE_WEBHOOK_ALLOWED_NETWORKS) !== JSON.stringify([`${address}/32`])
      )
        problems.push(
          `${core.fxgate.where}: FXGATE_WEBHOOK_ALLOWED_NETWORKS is ${JSON.stringify(core.config.FXGATE_WEBHOOK_ALLOWED_NETWORKS)}, not the Service ${service.metadata.name}'s fixed address alone (${address ?? 'none fixed'})`,
        );
    const target = servicePortTarget(model, service, Number(url.port || 443));
    if (typeof target === 'string') {
      say(target);
      continue;
    }
    const proxy = target.container;
    const configVolume = proxy.volumeMounts.find((mount) => mount.mountPath === '/usr/local/etc/haproxy');
    const configMapName = target.deployment.spec.template.spec.volumes.find(
      (volume) => volume.name === configVolume?.name,
    )?.configMap?.name;
    const cfg = objectsOf(model.fleet, 'ConfigMap', configMapSchema).find(
      (each) => each.metadata.name === configMapName,
    )?.data['haproxy.cfg'];
    if (cfg === undefined) {
      say(`${target.deployment.metadata.name} mounts no haproxy.cfg at /usr/local/etc/haproxy`);
      continue;
    }
    const sections = parseHaproxy(cfg);
    const frontend = sections.find(
      (each) => each.type === 'frontend' && linesStarting(each, 'bind').some((line) => bindPort(line) === target.port),
    );
    const bind = frontend === undefined ? [] : (linesStarting(frontend, 'bind')[0] ?? []);
    const crt = serverParam(bind, 'crt');
    if (frontend === undefined || !bind.includes('ssl') || crt === undefined) {
      say(`haproxy does not terminate TLS on port ${target.port}`);
      continue;
    }
    const backendName = linesStarting(frontend, 'default_backend')[0]?.[1];
    const backend = sections.find((each) => each.type === 'backend' && each.name === backendName);
    const templates = backend === undefined ? [] : linesStarting(backend, 'server-template');
    const gatewaysVia = templates.map((line) => {
      const [host = '', port = ''] = (line[3] ?? '').split(':');
      const headless = serviceOfHost(model, host);
      return { headless, port: Number(port) };
    });
    if (backend === undefined || gatewaysVia.length !== 1 || gatewaysVia[0]!.headless?.spec.clusterIP !== 'None')
      say('haproxy does not balance over the gateway pods of a headless Service');
    else {
      const reached = servicePortTarget(model, gatewaysVia[0]!.headless!, gatewaysVia[0]!.port);
      if (
        typeof reached === 'string' ||
        reached.deployment !== gateway.deployment ||
        reached.port !== gateway.config.PORT
      )
        say(`haproxy's servers are not the gateway pods on PORT`);
      else
        problems.push(
          ...backendProblems(sections, backend, [
            { address: templates[0]![3]!, drainDelayMs: drainDelayMs(gateway.config) },
          ]),
        );
    }
    const certificateFile = mountedFiles(model.fleet, target.deployment, proxy).get(crt);
    if (certificateFile === undefined || !existsSync(certificateFile)) {
      say(`haproxy's certificate ${crt} is no secret file deploy/README.md makes`);
      continue;
    }
    const certificate = new X509Certificate(readFileSync(certificateFile));
    if (certificate.checkHost(url.hostname) === undefined) say(`haproxy's certificate is not for ${url.hostname}`);
    for (const core of cores) {
      const caFile = core.fxgate.files.get(core.fxgate.env.NODE_EXTRA_CA_CERTS ?? '');
      if (caFile === undefined) problems.push(`${core.fxgate.where}: NODE_EXTRA_CA_CERTS names no CA file it mounts`);
      else if (!certificate.verify(new X509Certificate(readFileSync(caFile)).publicKey))
        problems.push(`${core.fxgate.where}: the CA of NODE_EXTRA_CA_CERTS did not sign haproxy's certificate`);
    }
  }
  return [...new Set(problems)];
}

function secretProblems(model: KubernetesModel): string[] {
  const problems: string[] = [];
  for (const deployment of model.deployments) {
    for (const volume of deployment.spec.template.spec.volumes) {
      if (volume.secret === undefined) continue;
      const secret = model.fleet.secrets.find((each) => each.name === volume.secret!.secretName);
      if (secret === undefined)
        problems.push(
          `Deployment ${deployment.metadata.name}: the secret ${volume.secret.secretName} is one deploy/README.md does not make`,
        );
    }
    for (const container of deployment.spec.template.spec.containers) {
      const files = mountedFiles(model.fleet, deployment, container);
      for (const [inside, local] of files)
        if (!existsSync(local))
          problems.push(
            `Deployment ${deployment.metadata.name}: ${inside} is made from a file make-secrets.sh does not write`,
          );
    }
  }
  for (const server of model.servers)
    for (const [name, value] of Object.entries(server.fxgate.env))
      if (value.startsWith('/run/secrets/') && !server.fxgate.files.has(value) && name.endsWith('_FILE'))
        problems.push(`${server.fxgate.where}: ${name} names ${value}, which no secret it mounts holds`);
  return problems;
}

function kustomizationProblems(model: KubernetesModel): string[] {
  const problems: string[] = [];
  const { resources, images } = model.fleet.kustomization;
  const manifests = readdirSync(KUBERNETES_DIR)
    .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml' && file !== 'prometheus-scrape.yaml')
    .sort();
  if (JSON.stringify([...resources].sort()) !== JSON.stringify(manifests))
    problems.push(
      `the kustomization applies ${JSON.stringify(resources)}, not the manifests ${JSON.stringify(manifests)}`,
    );
  const image = images.find((each) => each.name === FXGATE_IMAGE);
  if (image?.newTag !== packageVersion())
    problems.push(`the kustomization tags ${FXGATE_IMAGE} ${image?.newTag}, not ${packageVersion()}`);
  const namespaces = model.fleet.objects.filter((object) => object.kind === 'Namespace').map((object) => object.name);
  if (!namespaces.includes(model.fleet.kustomization.namespace))
    problems.push(`the kustomization's namespace ${model.fleet.kustomization.namespace} is made by no manifest`);
  return problems;
}

const scrapeFile = z.looseObject({
  scrape_configs: z.array(
    z.looseObject({
      job_name: z.string(),
      authorization: z.looseObject({ credentials_file: z.string().optional() }).optional(),
      kubernetes_sd_configs: z.array(
        z.looseObject({ namespaces: z.looseObject({ names: z.array(z.string()) }).optional() }),
      ),
      relabel_configs: z.array(
        z.looseObject({
          source_labels: z.array(z.string()).optional(),
          regex: z.string().optional(),
          action: z.string().optional(),
        }),
      ),
    }),
  ),
});

function scrapeProblems(model: KubernetesModel): string[] {
  const problems: string[] = [];
  const job = scrapeFile.parse(parse(model.fleet.scrapeConfig)).scrape_configs[0];
  if (job === undefined) return ['prometheus-scrape.yaml has no job'];
  if (job.authorization?.credentials_file === undefined) problems.push('the scrape job sends no admin token');
  if (!job.kubernetes_sd_configs.some((each) => each.namespaces?.names.includes(model.fleet.kustomization.namespace)))
    problems.push(`the scrape job does not look in the namespace ${model.fleet.kustomization.namespace}`);
  const portRule = job.relabel_configs.find(
    (rule) => rule.action === 'keep' && rule.source_labels?.includes('__meta_kubernetes_pod_container_port_name'),
  );
  if (portRule?.regex === undefined) return [...problems, 'the scrape job keeps no container port by name'];
  const portName = new RegExp(`^(?:${portRule.regex})$`);
  for (const server of model.servers) {
    const kept = server.container.ports.filter((port) => port.name !== undefined && portName.test(port.name));
    if (kept.length !== 1 || kept[0]!.containerPort !== server.config.FXGATE_ADMIN_PORT)
      problems.push(
        `${server.fxgate.where}: the scrape job keeps ${JSON.stringify(kept.map((port) => port.containerPort))}, not FXGATE_ADMIN_PORT ${String(server.config.FXGATE_ADMIN_PORT)}`,
      );
  }
  return problems;
}
