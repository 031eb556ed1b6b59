/**
 * parley's built-in tools module loaded synchronously, where the CLI bundle can (it calls
 * setToolsRequire). Kept apart from startup/module-loader.ts, which the tools import: this module
 * names the tools module's type, and one file holding both made an import circle.
 */
/** parley's built-in tools module (its definitions' schemas load TypeBox). */
export type ToolsModule = typeof import("./index.js");

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
