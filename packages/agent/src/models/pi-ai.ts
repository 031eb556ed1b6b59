/**
 * Lazy access to `@mariozechner/pi-ai`.
 *
 * Importing pi-ai's root module is not free. Measured on the development machine (Node 20,
 * cold process, `await import("@mariozechner/pi-ai")`): 250–380 ms, of which ~200 ms is
 * `typebox` and ~130 ms is `typebox/compile` (pulled in by pi-ai's tool-argument validation),
 * ~15 ms is the generated model table; the provider SDKs themselves are already loaded on first
 * use by pi-ai 0.73.1. A plain `import("node:fs")` takes ~5 ms for comparison. The package only
 * exports its root (no deep imports), so the whole cost is paid on the first import.
 *
 * The files in this folder therefore import pi-ai with `import type` only, and load the runtime
 * through `loadPiAi()` when a model is resolved or a stream is created. That keeps `--help`,
 * `--version`, usage errors and `--model-script` validation errors fast, and lets the CLI overlap
 * the import with other start-up work (call `loadPiAi()` early without awaiting it).
 */
export type PiAi = typeof import("@mariozechner/pi-ai");

let loading: Promise<PiAi> | undefined;
let loaded: PiAi | undefined;

/** Import pi-ai once; later calls share the same promise. */
export function loadPiAi(): Promise<PiAi> {
  loading ??= import("@mariozechner/pi-ai").then((mod) => {
    loaded = mod;
    return mod;
  });
  return loading;
}

/** The pi-ai module if `loadPiAi()` has already finished, else undefined. */
export function piAiIfLoaded(): PiAi | undefined {
  return loaded;
}
