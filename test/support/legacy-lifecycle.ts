/**
 * The gateways the tests build run at a fixed point of the legacy generations' lifecycle: before
 * v1's default sunset (2026-12-31T23:59:59Z, after which v1 is refused with 410) and outside any
 * brownout, so that no test's outcome depends on the day it runs. Tests of the lifecycle itself
 * give their own clock.
 */
import type { GenerationLifecycleOptions } from '../../src/gateway/legacy/runtime/generation-lifecycle.js';

/** 2026-06-01T00:00:00Z: v1 deprecated, not yet retired. */
export const BEFORE_V1_SUNSET = Date.UTC(2026, 5, 1);

export const TEST_LIFECYCLE = { now: () => BEFORE_V1_SUNSET } as const satisfies GenerationLifecycleOptions;
