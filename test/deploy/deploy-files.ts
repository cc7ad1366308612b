/**
 * The files of deploy/ read as the tools that use them read them: the Compose file with its
 * anchors and merge keys, the Kubernetes manifests as YAML 1.1 (Kubernetes' own parser: `0440`
 * is octal), haproxy's and PgBouncer's configuration as sections of lines, the secrets the
 * deploy README creates with kubectl, the secret files make-secrets.sh writes, and the
 * repository's Dockerfile as Docker reads it (dockerfile-ast), for what its image runs by default. Shapes are
 * checked with zod as far as the checks read them; everything else passes through. Reads files
 * and runs make-secrets.sh into a folder it is given; touches nothing else.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import type { JSONInstruction } from 'dockerfile-ast';
import { DockerfileParser, Env } from 'dockerfile-ast';
import { parse, parseAllDocuments } from 'yaml';
import { z } from 'zod';

export const ROOT = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const DEPLOY = path.join(ROOT, 'deploy');
export const COMPOSE_DIR = path.join(DEPLOY, 'compose');
export const KUBERNETES_DIR = path.join(DEPLOY, 'kubernetes');

export function readDeployFile(relative: string): string {
  return readFileSync(path.join(DEPLOY, relative), 'utf8');
}

// ---------------------------------------------------------------------------------------------
// Compose

const stringList = z.array(z.string());
/** Environment as a mapping (values as YAML gave them) or as `NAME=value` lines. */
const composeEnvironment = z.union([
  z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  stringList,
]);
const composeNetworks = z.union([
  stringList,
  z.record(
    z.string(),
    z.union([z.null(), z.looseObject({ ipv4_address: z.string().optional(), aliases: stringList.optional() })]),
  ),
]);
const composeSecretRef = z.union([z.string(), z.looseObject({ source: z.string(), target: z.string().optional() })]);

export const composeServiceSchema = z.looseObject({
  image: z.string().optional(),
  build: z.union([z.string(), z.looseObject({ context: z.string() })]).optional(),
  command: z.union([z.string(), stringList]).optional(),
  entrypoint: z.union([z.string(), stringList]).optional(),
  environment: composeEnvironment.optional(),
  secrets: z.array(composeSecretRef).optional(),
  networks: composeNetworks.optional(),
  ports: z.array(z.union([z.string(), z.number()])).optional(),
  volumes: stringList.optional(),
  stop_grace_period: z.string().optional(),
  stop_signal: z.string().optional(),
  profiles: stringList.optional(),
  depends_on: z.union([stringList, z.record(z.string(), z.unknown())]).optional(),
});
export type ComposeService = z.infer<typeof composeServiceSchema>;

export const composeFileSchema = z.looseObject({
  services: z.record(z.string(), composeServiceSchema),
  secrets: z.record(z.string(), z.looseObject({ file: z.string() })).default({}),
  networks: z
    .record(
      z.string(),
      z.union([
        z.null(),
        z.looseObject({
          internal: z.boolean().optional(),
          ipam: z.looseObject({ config: z.array(z.looseObject({ subnet: z.string() })) }).optional(),
        }),
      ]),
    )
    .default({}),
});
export type ComposeFile = z.infer<typeof composeFileSchema>;

/** compose.yaml as Compose reads it: anchors resolved, `<<` merge keys applied, `x-` extensions left aside. */
export function readCompose(text = readDeployFile('compose/compose.yaml')): ComposeFile {
  return composeFileSchema.parse(parse(text, { merge: true }));
}

/** A service's environment as text values, as the container gets them. */
export function composeEnv(service: ComposeService): Record<string, string> {
  const environment = service.environment ?? {};
  if (Array.isArray(environment)) {
    return Object.fromEntries(
      environment.map((line) => {
        const at = line.indexOf('=');
        return at < 0 ? [line, ''] : [line.slice(0, at), line.slice(at + 1)];
      }),
    );
  }
  return Object.fromEntries(
    Object.entries(environment)
      .filter(([, value]) => value !== null)
      .map(([name, value]) => [name, String(value)]),
  );
}

export function asArgv(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? value.split(/\s+/).filter(Boolean) : [...value];
}

/** The networks a service is on, with its fixed address and aliases on each. */
export function composeNetworksOf(
  service: ComposeService,
): Map<string, { readonly ipv4Address?: string; readonly aliases: readonly string[] }> {
  const networks = service.networks ?? ['default'];
  if (Array.isArray(networks)) return new Map(networks.map((name) => [name, { aliases: [] }]));
  return new Map(
    Object.entries(networks).map(([name, settings]) => [
      name,
      {
        ...(settings?.ipv4_address === undefined ? {} : { ipv4Address: settings.ipv4_address }),
        aliases: settings?.aliases ?? [],
      },
    ]),
  );
}

/** Where each of a service's Compose secrets is mounted (`/run/secrets/<target>`), with the secret's name. */
export function composeSecretMounts(service: ComposeService): Map<string, string> {
  return new Map(
    (service.secrets ?? []).map((ref) =>
      typeof ref === 'string' ? [`/run/secrets/${ref}`, ref] : [`/run/secrets/${ref.target ?? ref.source}`, ref.source],
    ),
  );
}

/** A Compose duration (`15s`, `1m30s`, `500ms`) in ms; NaN when it is not one. */
export function durationMs(text: string): number {
  const match = /^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/.exec(text.trim());
  if (match === null || text.trim() === '') return Number.NaN;
  const [hours, minutes, seconds, ms] = match.slice(1).map((part) => Number(part ?? 0)) as [
    number,
    number,
    number,
    number,
  ];
  return ((hours * 60 + minutes) * 60 + seconds) * 1000 + ms;
}

// ---------------------------------------------------------------------------------------------
// Kubernetes

const labels = z.record(z.string(), z.string());
const labelSelector = z.looseObject({ matchLabels: labels });
const portRef = z.union([z.number(), z.string()]);
const probe = z.looseObject({
  httpGet: z.looseObject({ path: z.string(), port: portRef }).optional(),
  periodSeconds: z.number().optional(),
  failureThreshold: z.number().optional(),
  timeoutSeconds: z.number().optional(),
});
const envVar = z.looseObject({
  name: z.string(),
  value: z.string().optional(),
  valueFrom: z
    .looseObject({
      secretKeyRef: z.looseObject({ name: z.string(), key: z.string(), optional: z.boolean().optional() }).optional(),
      configMapKeyRef: z.looseObject({ name: z.string(), key: z.string() }).optional(),
    })
    .optional(),
});
export const containerSchema = z.looseObject({
  name: z.string(),
  image: z.string(),
  command: stringList.optional(),
  args: stringList.optional(),
  ports: z.array(z.looseObject({ name: z.string().optional(), containerPort: z.number() })).default([]),
  env: z.array(envVar).default([]),
  envFrom: z
    .array(
      z.looseObject({
        configMapRef: z.looseObject({ name: z.string() }).optional(),
        secretRef: z.looseObject({ name: z.string() }).optional(),
      }),
    )
    .default([]),
  readinessProbe: probe.optional(),
  livenessProbe: probe.optional(),
  startupProbe: probe.optional(),
  lifecycle: z
    .looseObject({
      preStop: z.looseObject({ exec: z.looseObject({ command: stringList }).optional() }).optional(),
    })
    .optional(),
  resources: z
    .looseObject({
      requests: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
      limits: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
    })
    .optional(),
  volumeMounts: z.array(z.looseObject({ name: z.string(), mountPath: z.string() })).default([]),
});
export type Container = z.infer<typeof containerSchema>;

const volume = z.looseObject({
  name: z.string(),
  secret: z.looseObject({ secretName: z.string(), defaultMode: z.number().optional() }).optional(),
  configMap: z.looseObject({ name: z.string() }).optional(),
});

export const deploymentSchema = z.looseObject({
  kind: z.literal('Deployment'),
  metadata: z.looseObject({ name: z.string() }),
  spec: z.looseObject({
    replicas: z.number(),
    selector: labelSelector,
    strategy: z
      .looseObject({
        type: z.string(),
        rollingUpdate: z.looseObject({ maxUnavailable: portRef.optional(), maxSurge: portRef.optional() }).optional(),
      })
      .optional(),
    template: z.looseObject({
      metadata: z.looseObject({ labels }),
      spec: z.looseObject({
        terminationGracePeriodSeconds: z.number().optional(),
        containers: z.array(containerSchema),
        volumes: z.array(volume).default([]),
      }),
    }),
  }),
});
export type Deployment = z.infer<typeof deploymentSchema>;

export const serviceSchema = z.looseObject({
  kind: z.literal('Service'),
  metadata: z.looseObject({ name: z.string() }),
  spec: z.looseObject({
    clusterIP: z.string().optional(),
    selector: labels,
    ports: z.array(z.looseObject({ name: z.string().optional(), port: z.number(), targetPort: portRef.optional() })),
  }),
});
export type Service = z.infer<typeof serviceSchema>;

export const pdbSchema = z.looseObject({
  kind: z.literal('PodDisruptionBudget'),
  metadata: z.looseObject({ name: z.string() }),
  spec: z.looseObject({
    minAvailable: portRef.optional(),
    maxUnavailable: portRef.optional(),
    selector: labelSelector,
  }),
});

export const configMapSchema = z.looseObject({
  kind: z.literal('ConfigMap'),
  metadata: z.looseObject({ name: z.string() }),
  data: z.record(z.string(), z.string()),
});

export const networkPolicySchema = z.looseObject({
  kind: z.literal('NetworkPolicy'),
  metadata: z.looseObject({ name: z.string() }),
  spec: z.looseObject({
    podSelector: labelSelector,
    ingress: z
      .array(
        z.looseObject({
          from: z
            .array(
              z.looseObject({
                podSelector: labelSelector.optional(),
                namespaceSelector: labelSelector.optional(),
              }),
            )
            .default([]),
          ports: z.array(z.looseObject({ port: portRef })).default([]),
        }),
      )
      .default([]),
  }),
});

export const kustomizationSchema = z.looseObject({
  namespace: z.string(),
  resources: stringList,
  images: z.array(z.looseObject({ name: z.string(), newName: z.string().optional(), newTag: z.string() })).default([]),
});

export interface KubernetesObject {
  readonly file: string;
  readonly kind: string;
  readonly name: string;
  readonly body: unknown;
}

/** Every object of the manifests kustomization.yaml lists, as Kubernetes parses them (YAML 1.1). */
export function readKubernetesObjects(
  files: readonly string[],
  read: (relative: string) => string = readDeployFile,
): KubernetesObject[] {
  const objects: KubernetesObject[] = [];
  for (const file of files) {
    for (const document of parseAllDocuments(read(`kubernetes/${file}`), { version: '1.1' })) {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors.map(String).join('; ')}`);
      const body: unknown = document.toJS();
      if (body === null) continue;
      const head = z.looseObject({ kind: z.string(), metadata: z.looseObject({ name: z.string() }) }).parse(body);
      objects.push({ file, kind: head.kind, name: head.metadata.name, body });
    }
  }
  return objects;
}

export function readKustomization(
  read: (relative: string) => string = readDeployFile,
): z.infer<typeof kustomizationSchema> {
  return kustomizationSchema.parse(parse(read('kubernetes/kustomization.yaml'), { version: '1.1' }));
}

/** Whether a label selector selects pods carrying `podLabels`. */
export function selects(
  selector: Readonly<Record<string, string>>,
  podLabels: Readonly<Record<string, string>>,
): boolean {
  const entries = Object.entries(selector);
  return entries.length > 0 && entries.every(([key, value]) => podLabels[key] === value);
}

/** A port of a container by number or by name; undefined when it has none such. */
export function containerPort(container: Container, ref: number | string): number | undefined {
  if (typeof ref === 'number') return container.ports.some((port) => port.containerPort === ref) ? ref : undefined;
  return container.ports.find((port) => port.name === ref)?.containerPort;
}

// ---------------------------------------------------------------------------------------------
// haproxy and PgBouncer

export interface HaproxySection {
  /** `global`, `defaults`, `frontend`, `backend`, `resolvers`, `listen`. */
  readonly type: string;
  readonly name: string;
  /** Each line's words, comments dropped. */
  readonly lines: readonly (readonly string[])[];
}

/** haproxy's configuration as its sections: a section starts at a keyword in the first column. */
export function parseHaproxy(text: string): HaproxySection[] {
  const sections: { type: string; name: string; lines: string[][] }[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/(^|\s)#.*$/, '').trimEnd();
    if (line.trim() === '') continue;
    const words = line.trim().split(/\s+/);
    if (!/^\s/.test(line)) sections.push({ type: words[0]!, name: words[1] ?? '', lines: [] });
    else if (sections.length === 0) throw new Error(`haproxy configuration: "${line.trim()}" is outside any section`);
    else sections[sections.length - 1]!.lines.push(words);
  }
  return sections;
}

/** The lines of a section starting with the given words. */
export function linesStarting(section: HaproxySection, ...words: string[]): (readonly string[])[] {
  return section.lines.filter((line) => words.every((word, index) => line[index] === word));
}

/** The value after `keyword` on a server or default-server line (`inter 1s`), if any. */
export function serverParam(line: readonly string[], keyword: string): string | undefined {
  const at = line.indexOf(keyword);
  return at < 0 ? undefined : line[at + 1];
}

/** An haproxy time (`1s`, `500ms`, `2m`, or ms as a bare number) in ms; NaN when it is not one. */
export function haproxyTimeMs(text: string | undefined): number {
  const match = /^(\d+)(us|ms|s|m|h|d)?$/.exec(text ?? '');
  if (match === null) return Number.NaN;
  const factor = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 'ms']!;
  return Number(match[1]) * factor;
}

/** The port of a `bind [address]:port ...` line. */
export function bindPort(line: readonly string[]): number {
  return Number(/:(\d+)$/.exec(line[1] ?? '')?.[1] ?? Number.NaN);
}

/** An ini file (PgBouncer's) as sections of key = value; `;` and `#` start comments. */
export function parseIni(text: string): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let current: Map<string, string> | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/^\s*[;#].*$/, '').trim();
    if (line === '') continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      current = new Map();
      sections.set(header[1]!, current);
      continue;
    }
    const at = line.indexOf('=');
    if (current === null || at < 0) throw new Error(`ini: "${line}" is not key = value inside a section`);
    current.set(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  return sections;
}

// ---------------------------------------------------------------------------------------------
// Secrets

export interface DocumentedSecret {
  readonly name: string;
  /** Key to the file it is made from, relative to deploy/compose (`secrets/fxgate-admin-token`). */
  readonly files: ReadonlyMap<string, string>;
  /** Key to its literal value as the command gives it. */
  readonly literals: ReadonlyMap<string, string>;
  /** Folders whose every file is a key. */
  readonly folders: readonly string[];
}

/** The secrets the deploy README makes with `kubectl create secret generic`, continued lines joined. */
export function documentedSecrets(readme = readDeployFile('README.md')): DocumentedSecret[] {
  const joined = readme.replace(/\\\n\s*/g, ' ');
  const secrets: DocumentedSecret[] = [];
  for (const match of joined.matchAll(/kubectl(?: -n \S+)? create secret generic (\S+)([^\n]*)/g)) {
    const rest = match[2]!;
    const files = new Map<string, string>();
    const literals = new Map<string, string>();
    const folders: string[] = [];
    for (const option of rest.matchAll(/--from-(file|literal)=(?:([^=\s]+)=)?('[^']*'|"[^"]*"|\S+)/g)) {
      const [, kind, key, value] = option as unknown as [string, string, string | undefined, string];
      const unquoted = value.replace(/^(['"])(.*)\1$/, '$2');
      if (kind === 'literal' && key !== undefined) literals.set(key, unquoted);
      else if (kind === 'file' && key !== undefined) files.set(key, unquoted);
      else if (kind === 'file') folders.push(unquoted);
    }
    secrets.push({ name: match[1]!, files, literals, folders });
  }
  return secrets;
}

const run = promisify(execFile);

/** Runs make-secrets.sh into `dir`, as an operator does once before the first start. */
export async function makeSecrets(dir: string): Promise<void> {
  await run(path.join(COMPOSE_DIR, 'make-secrets.sh'), [dir], { timeout: 60_000 });
}

export function packageVersion(): string {
  return z.object({ version: z.string() }).parse(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')))
    .version;
}

export function packageBin(): string {
  return z
    .object({ bin: z.object({ fxgate: z.string() }) })
    .parse(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'))).bin.fxgate;
}

// ---------------------------------------------------------------------------------------------
// The image

/** What a container of the repository's image gets unless told otherwise: its final stage's settings. */
export interface ImageDefaults {
  /** The final stage's base image (`node:20-bookworm-slim`). */
  readonly base: string;
  /** The exec form's strings; the shell form as Docker runs it, `/bin/sh -c <text>`. */
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
  /** ENV, in order, later values winning. */
  readonly env: Readonly<Record<string, string>>;
  /** EXPOSE's ports, the protocol dropped. */
  readonly exposed: readonly string[];
  readonly user: string | null;
}

function argvOf(instruction: JSONInstruction | undefined): string[] {
  if (instruction === undefined) return [];
  const json = instruction.getJSONStrings();
  if (json.length > 0) return json.map((argument) => argument.getJSONValue());
  const text = instruction.getArgumentsContent();
  return text === null ? [] : ['/bin/sh', '-c', text];
}

/** The final stage of the repository's Dockerfile (or of `text`). */
export function readImage(text = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')): ImageDefaults {
  const dockerfile = DockerfileParser.parse(text);
  const froms = dockerfile.getFROMs();
  const last = froms.at(-1);
  if (last === undefined) throw new Error('the Dockerfile has no FROM');
  const fromLine = last.getRange().start.line;
  const stage = dockerfile.getInstructions().filter((instruction) => instruction.getRange().start.line > fromLine);
  const lastOf = (keyword: string): JSONInstruction | undefined =>
    stage.filter((instruction) => instruction.getKeyword() === keyword).at(-1) as JSONInstruction | undefined;
  const env: Record<string, string> = {};
  for (const instruction of stage)
    if (instruction instanceof Env)
      for (const property of instruction.getProperties()) env[property.getName()] = property.getUnescapedValue() ?? '';
  return {
    base: last.getImage() ?? '',
    entrypoint: argvOf(lastOf('ENTRYPOINT')),
    cmd: argvOf(lastOf('CMD')),
    env,
    exposed: stage
      .filter((instruction) => instruction.getKeyword() === 'EXPOSE')
      .flatMap((instruction) => instruction.getArguments().map((argument) => argument.getValue().split('/')[0]!)),
    user: lastOf('USER')?.getArgumentsContent() ?? null,
  };
}

/**
 * A container's command line from its image's ENTRYPOINT and CMD and what its deployment says.
 * `entrypoint` replaces the image's ENTRYPOINT and drops its CMD (Compose's `entrypoint`,
 * Kubernetes' `command`); `command` replaces the CMD (Compose's `command`, Kubernetes' `args`).
 */
export function containerArgv(
  image: Pick<ImageDefaults, 'entrypoint' | 'cmd'>,
  entrypoint: readonly string[] | undefined,
  command: readonly string[] | undefined,
): string[] {
  if (entrypoint !== undefined) return [...entrypoint, ...(command ?? [])];
  return [...image.entrypoint, ...(command ?? image.cmd)];
}
