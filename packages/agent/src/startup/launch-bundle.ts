/**
 * Runs the CLI from its CommonJS bundle (dist/bundle/parley-cli.js) with a V8 code cache beside it,
 * so start-up deserialises compiled code instead of parsing ~400 KB of JavaScript (~10 ms).
 * Node 20 caches no ES modules (`module.enableCompileCache()` is Node 22), hence CommonJS and
 * `vm.Script` with `cachedData`.
 *
 * The bundle is registered in `require.cache` under its own path, so the modules extensions
 * import (dist/bundle/index.js and the compat module, which look the bundle up there) share this
 * one instance of every parley module with the CLI.
 */
import { readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire, Module } from "node:module";
import { dirname } from "node:path";
import { Script } from "node:vm";
import type { ModuleLoader } from "./module-loader.js";

/** What happened to the code cache: consumed, refused by V8 (another Node version or flags), or absent. */
export type CodeCacheUse = "used" | "rejected" | "missing";

/** Runs with Node or V8 flags (`execArgv`, `NODE_OPTIONS`): they keep a cache of their own, and their own optimizer setting. */
const flagged = process.execArgv.length > 0 || (process.env["NODE_OPTIONS"] ?? "").trim() !== "";

export interface LoadedBundle<T> {
  exports: T;
  cache: CodeCacheUse;
}

type CommonJsWrapper = (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string) => void;

/**
 * Loads a CommonJS module from a file that holds it already wrapped, as the single expression
 * `(function (exports, require, module, __filename, __dirname) {…})`, through `vm.Script` with a
 * code cache. The file is compiled exactly as read: wrapping it here would copy the whole source.
 *
 * A missing or rejected cache is written when the process exits, so it holds the functions this
 * run compiled, not only the top level. The cache file is named after V8's version and the
 * file's size and mtime: V8 itself checks only the source's length, and a stale cache for a
 * rebuilt bundle must never be used. Runs with Node or V8 flags (`execArgv`, `NODE_OPTIONS`) use
 * a second cache file: some flags make V8 refuse a cache, and a profiling run must not make every
 * later plain run compile again; all flagged runs share that one file, so none pile up.
 */
export function loadBundle<T>(file: string): LoadedBundle<T> {
  const path = realpathSync(file);
  const { size, mtimeMs } = statSync(path);
  const cacheFile = `${path}.${process.versions.v8}.${size}-${Math.trunc(mtimeMs)}${flagged ? ".flags" : ""}.cache`;
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  // V8 accepts a cache only under the flags it was written with: both happen with the optimizer on.
  const script = withOptimizerOn(
    () =>
      new Script(readFileSync(path, "utf8"), {
        filename: path,
        ...(cachedData !== undefined ? { cachedData } : {}),
      }),
  );
  const cache: CodeCacheUse = cachedData === undefined ? "missing" : script.cachedDataRejected === true ? "rejected" : "used";

  const require = createRequire(path);
  const module = new Module(path);
  module.filename = path;
  require.cache[path] = module;
  try {
    const wrapper: unknown = script.runInThisContext();
    if (typeof wrapper !== "function") {
      throw new Error(
        `${path} must hold one wrapped CommonJS module, (function (exports, require, module, __filename, __dirname) {…}); rebuild it with npm run build`,
      );
    }
    (wrapper as CommonJsWrapper)(module.exports, require, module, path, dirname(path));
  } catch (error) {
    delete require.cache[path];
    throw error;
  }
  module.loaded = true;
  if (cache !== "used") process.once("exit", () => writeCache(script, cacheFile));
  return { exports: module.exports as T, cache };
}

/** Best effort: an install directory may be read-only, and then every start just compiles. */
function writeCache(script: Script, cacheFile: string): void {
  const temporary = `${cacheFile}.${process.pid}.tmp`;
  try {
    writeFileSync(
      temporary,
      withOptimizerOn(() => script.createCachedData()),
    );
    // A rename is atomic: a parley starting meanwhile reads the old cache or the whole new one.
    renameSync(temporary, cacheFile);
  } catch {
    rmSync(temporary, { force: true });
  }
}

let optimizerPauses = 0;
/** Holds of the young generation's size: the optimizer's pauses and holdYoungGeneration's. */
let youngHolds = 0;

/**
 * While extensions load: V8's optimizing compilers (Turbofan, and Maglev, which Node 22+ run too) off, and the young generation kept at
 * its size. Loading extensions makes a few functions hot for a moment (jiti's alias table and path
 * handling, esbuild's export helpers), and the first optimized compile maps in ~3.5 MiB of the
 * compiler's code and allocates its working memory: ~5 MiB of the start-up peak with pi's
 * example extensions, for code that runs once. The young generation would double on the way (a
 * burst of short-lived objects), another ~0.5 MiB. Both flags are read where V8 decides, so
 * functions that stay hot are optimized, and the young generation grows, once they are back.
 * Only runs without flags of their own pause: the values restored are V8's defaults.
 */
const PAUSED_FLAGS = "--no-opt --no-maglev";
const DEFAULT_FLAGS = "--opt --maglev";
const YOUNG_KEPT = "--semi-space-growth-factor=1";
const YOUNG_GROWS = "--semi-space-growth-factor=2";
/** node:v8 on first use: a start without extensions never pauses, and the module costs ~1 MiB. */
const setFlagsFromString = (flags: string): void => process.getBuiltinModule("node:v8").setFlagsFromString(flags);

/** Pauses as above until the returned function is called (pauses nest). */
export function pauseOptimizer(): () => void {
  if (flagged) return () => undefined;
  if (optimizerPauses++ === 0) setFlagsFromString(PAUSED_FLAGS);
  const release = holdYoungGeneration();
  let resumed = false;
  return () => {
    if (resumed) return;
    resumed = true;
    if (--optimizerPauses === 0) setFlagsFromString(DEFAULT_FLAGS);
    release();
  };
}

/**
 * The young generation kept at its size until the returned function is called (holds nest): while
 * a big session file loads, everything allocated lives on (~150 MB of messages for a 100 MB file),
 * and the young generation doubled on the way up to 2 × 64 MiB, pages that stayed resident: ~95 MiB
 * of the resumed session's peak RSS, for no speed (the objects are promoted either way).
 */
export function holdYoungGeneration(): () => void {
  if (flagged) return () => undefined;
  if (youngHolds++ === 0) setFlagsFromString(YOUNG_KEPT);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--youngHolds === 0) setFlagsFromString(YOUNG_GROWS);
  };
}

/** The flags are part of what V8 checks a code cache against: caches are read and written under the defaults. */
function withOptimizerOn<T>(run: () => T): T {
  if (optimizerPauses === 0 && youngHolds === 0) return run();
  setFlagsFromString(`${DEFAULT_FLAGS} ${YOUNG_GROWS}`);
  try {
    return run();
  } finally {
    setFlagsFromString(`${optimizerPauses > 0 ? PAUSED_FLAGS : DEFAULT_FLAGS} ${youngHolds > 0 ? YOUNG_KEPT : YOUNG_GROWS}`);
  }
}

/** What the CLI bundle exports (cli-bundle-entry.cjs). */
export interface CliBundle {
  main(argv: string[]): Promise<void>;
  setModuleLoader(loader: ModuleLoader): void;
}

/** import() and resolution for the bundle, which cannot use its own (see module-loader.ts). */
export function launcherModuleLoader(): ModuleLoader {
  return {
    import: (specifier) => import(specifier),
    pauseOptimizer,
    holdYoungGeneration,
    // Used only as a fallback (see models/pi-ai-files.ts). dist/startup/module-loader.js, an ES
    // module that "../startup/" reaches from both copies of this file (dist/startup/ and
    // dist/bundle/), resolves with its own import.meta.resolve.
    resolve: async (specifier) => ((await import("../startup/module-loader.js")) as typeof import("./module-loader.js")).resolveModule(specifier),
  };
}

/**
 * bin/parley.js: load the bundle, give it this module's import(), run the CLI. The bin runs the
 * CommonJS copy of this file the build writes (dist/bundle/launch.cjs): a start-up that loads no
 * ES module never starts Node's ES module loader, ~13 ms of every start. It names the bundle,
 * because this file's compiled ES module and that copy sit in different folders.
 */
export function launchCli(argv: string[], bundleFile: string): void {
  const { exports: cli } = loadBundle<CliBundle>(bundleFile);
  cli.setModuleLoader(launcherModuleLoader());
  cli.main(argv).catch((error: unknown) => {
    process.stderr.write(`parley: fatal: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
