/**
 * Small helpers the newest pi-ai exports and 0.73 lacks, written for parley from their documented
 * behaviour (see newest-modules.ts for how extensions get them).
 */

/** The text without lone UTF-16 surrogates (a high one not followed by a low one, or the reverse). */
export function sanitizeSurrogates(text: string): string {
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "");
}

/**
 * One signal that aborts when any of the given ones does (with its reason); `cleanup()` removes
 * the listeners. No signal given: none; one: that one.
 */
export function combineAbortSignals(signals: readonly (AbortSignal | undefined)[]): { signal?: AbortSignal; cleanup: () => void } {
  const given = signals.filter((s): s is AbortSignal => s !== undefined);
  if (given.length <= 1) return { ...(given[0] ? { signal: given[0] } : {}), cleanup: () => {} };
  const controller = new AbortController();
  const already = given.find((s) => s.aborted);
  if (already) {
    controller.abort(already.reason);
    return { signal: controller.signal, cleanup: () => {} };
  }
  const listeners = given.map((signal) => {
    const listener = () => {
      if (!controller.signal.aborted) controller.abort(signal.reason);
    };
    signal.addEventListener("abort", listener, { once: true });
    return { signal, listener };
  });
  return { signal: controller.signal, cleanup: () => listeners.forEach(({ signal, listener }) => signal.removeEventListener("abort", listener)) };
}

/** A Headers object as a plain record. */
export function headersToRecord(headers: Headers): Record<string, string> {
  return Object.fromEntries(headers.entries());
}

/**
 * Header records merged, later ones winning whatever the case of the name (the last spelling is
 * kept); a null value removes the header. Undefined when nothing is left.
 */
export function providerHeadersToRecord(...sources: (Record<string, string | null> | undefined)[]): Record<string, string> | undefined {
  const merged = new Map<string, [string, string]>();
  for (const source of sources) {
    for (const [name, value] of Object.entries(source ?? {})) {
      merged.delete(name.toLowerCase());
      if (value !== null) merged.set(name.toLowerCase(), [name, value]);
    }
  }
  return merged.size === 0 ? undefined : Object.fromEntries(merged.values());
}

type TypedModel = { type?: string; api?: string };

/** A model's type; models without one (all of pi-ai 0.73's) are chat models. */
export function getModelType(model: TypedModel): string {
  return model.type ?? "chat";
}

export function isModelType(model: TypedModel, type: string): boolean {
  return getModelType(model) === type;
}

/** Whether a chat model uses this API. */
export function hasApi(model: TypedModel, api: string): boolean {
  return isModelType(model, "chat") && model.api === api;
}
