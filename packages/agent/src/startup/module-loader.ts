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

/** parley's built-in tools module (its definitions' schemas load TypeBox). */
export type ToolsModule = typeof import("../tools/index.js");

let requireTools: (() => ToolsModule) | undefined;
let schemaLibraryLoaded: () => boolean = () => false;

/**
 * The CLI bundle supplies its tools module synchronously (a lazy initialiser inside the bundle): an
 * extension's synchronous `pi.getAllTools()` can then create the built-ins' definitions when it
 * first asks, instead of every extension's start-up paying for them. An ES module build has no
 * synchronous way to load a module: there they load before the extensions' factories run.
 * `typeboxLoaded` tells whether TypeBox, which the definitions' schemas are built with, is loaded.
 */
export function setToolsRequire(next: () => ToolsModule, typeboxLoaded: () => boolean): void {
  requireTools = next;
  schemaLibraryLoaded = typeboxLoaded;
}

let requirePiAi: (() => typeof import("@mariozechner/pi-ai")) | undefined;

/** The CLI bundle supplies pi-ai synchronously too (from its library bundle): see models/pi-ai.ts. */
export function setPiAiRequire(next: () => typeof import("@mariozechner/pi-ai")): void {
  requirePiAi = next;
}

/** pi-ai, loaded now; undefined where it cannot be loaded synchronously. */
export function requirePiAiModule(): typeof import("@mariozechner/pi-ai") | undefined {
  return requirePiAi?.();
}

/** The tools module, loaded now; undefined where it cannot be loaded synchronously. */
export function requireToolsModule(): ToolsModule | undefined {
  return requireTools?.();
}

/** Whether requireToolsModule() can load the tools module. */
export function canRequireTools(): boolean {
  return requireTools !== undefined;
}

/**
 * Whether the built-in tools' definitions cost only their own making (~1 ms, ~0.1 MiB) now: TypeBox
 * is already loaded (an extension or pi-ai loaded it). Otherwise making them would load TypeBox too.
 */
export function toolDefinitionsAreCheap(): boolean {
  return canRequireTools() && schemaLibraryLoaded();
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
