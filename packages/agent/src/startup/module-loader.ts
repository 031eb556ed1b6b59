/**
 * `import()` and `import.meta.resolve` for code outside parley's own modules (pi-ai, pi-agent-core,
 * jiti). They go through here because the CLI runs as a CommonJS bundle compiled from a V8 code
 * cache (see launch-bundle.ts), and in Node 20 a script consumed from a code cache loses its
 * dynamic-import callback. The launcher, a CommonJS file Node loads itself, supplies its own.
 */
import { createRequire } from "node:module";

export interface ModuleLoader {
  import(specifier: string): Promise<unknown>;
  /** The file URL an `import()` of `specifier` would load. Async: a CommonJS launcher has no synchronous ES resolver. */
  resolve(specifier: string): Promise<string>;
  /** The launcher's (launch-bundle.ts): V8's optimizing compiler off until the returned function is called. */
  pauseOptimizer?(): () => void;
  /** The launcher's: V8's young generation kept at its size until the returned function is called. */
  holdYoungGeneration?(): () => void;
}

let loader: ModuleLoader = {
  import: (specifier) => import(specifier),
  resolve: async (specifier) => import.meta.resolve(specifier),
};

/** Called once by the CLI's launcher before anything is imported. */
export function setModuleLoader(next: ModuleLoader): void {
  loader = next;
}

/** Import a package or a file URL. `T` is what the caller knows the module to be. */
export function importModule<T>(specifier: string): Promise<T> {
  return loader.import(specifier) as Promise<T>;
}

export function resolveModule(specifier: string): Promise<string> {
  return loader.resolve(specifier);
}

/**
 * Runs `work` (loading an extension's module, running its factory) with V8's optimizing compiler
 * paused, when the launcher can pause it (see pauseOptimizer in launch-bundle.ts): code that runs
 * once at start-up then costs no optimized compile, which would add ~5 MiB to the start-up peak.
 */
export async function whileOptimizerPaused<T>(work: () => Promise<T>): Promise<T> {
  const resume = loader.pauseOptimizer?.();
  try {
    return await work();
  } finally {
    resume?.();
  }
}

/**
 * Runs `work` (loading a session file, where nearly everything allocated lives on) with V8's young
 * generation kept at its size, when the launcher can hold it (see holdYoungGeneration in
 * launch-bundle.ts): ~95 MiB less resident memory for a 100 MB session, at the same speed.
 */
export function withYoungGenerationHeld<T>(work: () => T): T {
  const release = loader.holdYoungGeneration?.();
  try {
    return work();
  } finally {
    release?.();
  }
}

let requirePiAi: (() => typeof import("@earendil-works/pi-ai/compat")) | undefined;

/** The CLI bundle supplies pi-ai synchronously too (from its library bundle): see models/pi-ai.ts. */
export function setPiAiRequire(next: () => typeof import("@earendil-works/pi-ai/compat")): void {
  requirePiAi = next;
}

/** pi-ai, loaded now; undefined where it cannot be loaded synchronously. */
export function requirePiAiModule(): typeof import("@earendil-works/pi-ai/compat") | undefined {
  return requirePiAi?.();
}

/** jiti's `createJiti`, as parley uses it: the extension loader's TypeScript loader. */
export type CreateJiti = typeof import("jiti").createJiti;

let jitiFactory: () => CreateJiti = () => createRequire(import.meta.url)("jiti").createJiti as CreateJiti;

/**
 * The CLI bundle supplies jiti from a code-cached copy (~100 ms less per start with extensions):
 * jiti's own CommonJS entry holds an import(), which code run from a code cache cannot use.
 */
export function setJitiFactory(next: () => CreateJiti): void {
  jitiFactory = next;
}

/** jiti's createJiti, loaded on first use (a session without extensions never loads jiti). */
export function loadCreateJiti(): CreateJiti {
  return jitiFactory();
}
