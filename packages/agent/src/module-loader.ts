/**
 * `import()` and `import.meta.resolve` for code outside parley's own modules (pi-ai, pi-agent-core,
 * jiti). They go through here because the CLI runs as a CommonJS bundle compiled from a V8 code
 * cache (see cli/launch-bundle.ts), and in Node 20 a script consumed from a code cache loses its
 * dynamic-import callback. The launcher, an ES module, supplies its own import instead.
 */
export interface ModuleLoader {
  import(specifier: string): Promise<unknown>;
  resolve(specifier: string): string;
}

let loader: ModuleLoader = {
  import: (specifier) => import(specifier),
  resolve: (specifier) => import.meta.resolve(specifier),
};

/** Called once by the CLI's launcher before anything is imported. */
export function setModuleLoader(next: ModuleLoader): void {
  loader = next;
}

/** Import a package or a file URL. `T` is what the caller knows the module to be. */
export function importModule<T>(specifier: string): Promise<T> {
  return loader.import(specifier) as Promise<T>;
}

export function resolveModule(specifier: string): string {
  return loader.resolve(specifier);
}
