/**
 * GET /metrics of the admin listener: the Prometheus text of every registry a part added (the
 * gateway's `fxgate_gateway_...`, the core's `fxgate_core_...`), after the process's own
 * metrics (CPU, memory, heap, event loop: prom-client's default metrics). prom-client writes the
 * text; nothing here formats a sample.
 *
 * The default metrics are collected once per process, however many parts and listeners it
 * serves, since they describe the process and two collections of them would double-register
 * the same names. A part's registry whose metric names another registry already has is refused
 * when it is added, not at the first scrape.
 *
 * All of prom-client's default metrics but `nodejs_gc_duration_seconds`: the GC tracking its
 * collector turns on makes every garbage collection dearer, on every request's path. Heap sizes
 * and event-loop delay are kept.
 */
import { createRequire } from 'node:module';

import { collectDefaultMetrics, Registry } from 'prom-client';

/** One of prom-client's default collectors, as collectDefaultMetrics calls each. */
type DefaultCollector = (registry: Registry, config: { readonly eventLoopMonitoringPrecision: number }) => void;

const EXCLUDED_DEFAULTS: ReadonlySet<string> = new Set(['gc']);

let processRegistry: Registry | null = null;

/** The process's default metrics, collected from the first call on; the same registry every time. */
export function processMetrics(): Registry {
  if (processRegistry === null) {
    const registry = new Registry();
    // collectDefaultMetrics has no way to leave one out: its collectors are called as it calls them (its own precision, 10 ms).
    const require = createRequire(import.meta.url);
    for (const name of collectDefaultMetrics.metricsList) {
      if (EXCLUDED_DEFAULTS.has(name)) continue;
      (require(`prom-client/lib/metrics/${name}`) as DefaultCollector)(registry, { eventLoopMonitoringPrecision: 10 });
    }
    processRegistry = registry;
  }
  return processRegistry;
}

/** The metric names a registry holds. */
function namesOf(registry: Registry): string[] {
  return registry.getMetricsAsArray().map((metric) => metric.name);
}

export class MetricsExposition {
  private readonly registries: Registry[] = [processMetrics()];

  /** Adds a part's registry; throws when one of its names is taken, or when it is added twice. */
  add(registry: Registry): void {
    if (this.registries.includes(registry)) throw new Error('this metrics registry is exposed already');
    const taken = new Set(this.registries.flatMap(namesOf));
    const clashes = namesOf(registry).filter((name) => taken.has(name));
    if (clashes.length > 0) throw new Error(`metric names exposed twice: ${clashes.join(', ')}`);
    this.registries.push(registry);
  }

  get contentType(): string {
    return Registry.PROMETHEUS_CONTENT_TYPE;
  }

  /** Every registry's text, in the order added; each registry's own collect callbacks run first (on-scrape reads). */
  async text(): Promise<string> {
    // Merged per scrape: a part may still register a family after another part was added.
    return Registry.merge(this.registries).metrics();
  }
}
