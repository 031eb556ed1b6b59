/**
 * Registration of parley's two local model APIs with pi-ai's API registry, so that pi-ai's
 * `streamSimple(model, ...)` (what pi-agent-core's Agent calls) reaches them like any provider.
 */
import { OFFLINE_API, streamOfflineModel } from "./offline-model.js";
import { loadPiAiCore, type PiAiCore } from "./pi-ai.js";
import { SCRIPT_API, streamScriptModel } from "./script-model.js";

/** The `sourceId` parley's registrations carry in pi-ai's registry. */
export const PARLEY_SOURCE_ID = "parley";

/**
 * Register "parley-script" and "parley-offline" with an already loaded pi-ai. Idempotent, and
 * self-healing: an API that is missing (e.g. after pi-ai's `resetApiProviders()`) is registered
 * again, one that is present is left alone.
 */
export function registerParleyProvidersWith(pi: PiAiCore): void {
  for (const [api, streamModel] of [
    [SCRIPT_API, streamScriptModel],
    [OFFLINE_API, streamOfflineModel],
  ] as const) {
    if (pi.getApiProvider(api)) continue;
    pi.registerApiProvider(
      {
        api,
        stream: (model, context, options) => streamModel(pi, model, context, options),
        streamSimple: (model, context, options) => streamModel(pi, model, context, options),
      },
      PARLEY_SOURCE_ID,
    );
  }
}

/** Load pi-ai (see pi-ai.ts for the cost) and register parley's APIs. Safe to call any number of times. */
export async function registerParleyProviders(): Promise<void> {
  registerParleyProvidersWith(await loadPiAiCore());
}
