/**
 * Loads extension files (.ts or .js default-exporting `(pi) => void`) with jiti, resolving the
 * packages pi extensions import to parley's own copies so they need no install of their own.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ExtensionFactory } from "./types.js";
import { errorMessage } from "../error-text.js";
import { loadCreateJiti, whileOptimizerPaused } from "../startup/module-loader.js";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The folder that holds parley's entry modules (`index.js`, `extensions/compat/…`): `dist/` when
 * running the compiled files, `dist/bundle/` when running the bundle (whose entry modules
 * re-export the bundle's own instance), `src/` under a TypeScript loader.
 */
const entryRoot = ((): string => {
  for (let dir = here, i = 0; i < 3; dir = dirname(dir), i++) {
    for (const ext of ["cjs", "js", "ts"]) {
      if (existsSync(join(dir, "extensions", "compat", `pi-coding-agent.${ext}`))) return dir;
    }
  }
  return dirname(here);
})();
const entry = (relative: string): string => {
  for (const ext of ["cjs", "js"]) {
    const file = join(entryRoot, `${relative}.${ext}`);
    if (existsSync(file)) return file;
  }
  return join(entryRoot, `${relative}.ts`);
};

/** The folder of an installed package, found the way Node would from parley's own files. */
function packageDir(name: string): string | undefined {
  for (let dir = here; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Specifier → file for every entry point a package exports, so `typebox/compile` resolves as
 * well as `typebox`. Import conditions are preferred: extensions are ES modules.
 */
function exportAliases(name: string): Record<string, string> {
  const dir = packageDir(name);
  if (!dir) return {};
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { exports?: unknown; main?: string; module?: string };
  const out: Record<string, string> = {};
  const pick = (target: unknown): string | undefined => {
    if (typeof target === "string") return target;
    if (target && typeof target === "object") {
      const t = target as Record<string, unknown>;
      for (const key of ["import", "node", "default", "require"]) {
        const found = pick(t[key]);
        if (found) return found;
      }
    }
    return undefined;
  };
  const exportsField = pkg.exports;
  const entries: [string, unknown][] =
    typeof exportsField === "string" || (exportsField && typeof exportsField === "object" && !Object.keys(exportsField).some((k) => k.startsWith(".")))
      ? [[".", exportsField]]
      : Object.entries((exportsField ?? {}) as Record<string, unknown>);
  for (const [subpath, target] of entries) {
    const file = pick(target);
    if (!file || subpath.includes("*") || subpath.endsWith(".json")) continue;
    out[subpath === "." ? name : `${name}/${subpath.replace(/^\.\//, "")}`] = join(dir, file);
  }
  if (!out[name]) out[name] = join(dir, pkg.module ?? pkg.main ?? "index.js");
  return out;
}

/**
 * Specifier → module for the libraries the CLI bundle compiles in (dist/bundle/libraries/, written by
 * the build): an extension gets the running CLI's instance, loaded from its code cache. Empty when
 * running the compiled files unbundled.
 */
function bundledLibraries(): Record<string, string> {
  const dir = join(entryRoot, "libraries");
  if (!existsSync(dir)) return {};
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    const match = /^(_mariozechner_)?(.+)\.cjs$/.exec(name);
    if (!match?.[2]) continue;
    const specifier = (match[1] ? "@mariozechner/" : "") + match[2].replace(/_/g, "/");
    out[specifier] = join(dir, name);
  }
  return out;
}

/** The same entry points under another package name (`@earendil-works/pi-ai/oauth` → pi-ai's oauth). */
function renamed(from: string, to: string, table: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [specifier, file] of Object.entries(table))
    if (specifier === from || specifier.startsWith(`${from}/`)) out[to + specifier.slice(from.length)] = file;
  return out;
}

/** The packages whose newest-pi modules parley serves (newest-modules.ts), and their scopes. */
const NEWEST_PACKAGES = ["pi-ai", "pi-tui", "pi-agent-core"];
const NEWEST_SCOPES = ["@earendil-works", "@mariozechner"];

/** The folder of the build's newest-pi modules, when the build has written them. */
function newestFolder(): string | undefined {
  const dir = join(entryRoot, entryRoot.endsWith("bundle") ? "newest" : join("extensions", "compat", "newest"));
  return existsSync(dir) ? dir : undefined;
}

/**
 * Aliases for every module of the newest pi's pi-ai (each subpath), pi-tui and pi-agent-core,
 * under both scopes, to small CommonJS modules the build writes (one per module: `pi-ai.cjs`,
 * `pi-ai/utils/uuid.cjs`), each serving parley's own instance plus what only the newest pi has.
 * A package maps to its file, and `<package>/` to its folder, where jiti finds a subpath's file
 * (it tries `.cjs`): six aliases, not one per module (jiti goes through them all at each import).
 */
function newestLibraries(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pkg of NEWEST_PACKAGES) {
    for (const scope of NEWEST_SCOPES) {
      out[`${scope}/${pkg}/`] = join(dir, pkg);
      out[`${scope}/${pkg}`] = join(dir, `${pkg}.cjs`);
    }
  }
  return out;
}

/**
 * The file of a 0.73 library module by package-relative specifier ("pi-ai/oauth"), for the
 * newest-pi modules when parley runs unbundled (their build-written modules require it).
 */
export function libraryFile(specifier: string): string {
  const file = unbundledLibraries()[`@mariozechner/${specifier}`];
  if (file === undefined) throw new Error(`parley: no library module @mariozechner/${specifier}`);
  return file;
}

let unbundled: Record<string, string> | undefined;
function unbundledLibraries(): Record<string, string> {
  unbundled ??= {
    ...exportAliases("@mariozechner/pi-ai"),
    ...exportAliases("@mariozechner/pi-tui"),
    ...exportAliases("@mariozechner/pi-agent-core"),
    ...exportAliases("typebox"),
  };
  return unbundled;
}

/**
 * Package name → what an extension gets when it imports it. As in the newest pi, both scopes
 * work: `@earendil-works/*` (pi's packages' new names) and `@mariozechner/*`; `@sinclair/typebox`
 * is TypeBox. Every module the newest pi's pi-ai, pi-tui and pi-agent-core export is served by
 * newestLibraries(); 0.73's own subpaths (pi-ai/anthropic, …) stay as they were. Running from the
 * bundle, the libraries are the bundle's own instances (bundledLibraries()). jiti matches an alias
 * as a path prefix, so any other `@earendil-works/pi-ai/…` path fails to resolve rather than reach
 * a copy in node_modules.
 */
function aliases(): Record<string, string> {
  const bundled = bundledLibraries();
  const libraries = Object.keys(bundled).length > 0 ? bundled : { ...unbundledLibraries() };
  const dir = newestFolder();
  const newest = dir === undefined ? {} : newestLibraries(dir);
  if (dir !== undefined) {
    // 0.73's modules that the newest pi has too are served by the newest-pi modules.
    for (const specifier of Object.keys(libraries)) {
      const [, pkg, ...subpath] = specifier.split("/");
      if (pkg && NEWEST_PACKAGES.includes(pkg) && existsSync(join(dir, subpath.length === 0 ? `${pkg}.cjs` : join(pkg, `${subpath.join("/")}.cjs`)))) {
        delete libraries[specifier];
      }
    }
  } else {
    // Without the build's newest-pi modules (only `tsc -b` ran), pi-ai's compat entry is its root.
    const piAiRoot = libraries["@mariozechner/pi-ai"];
    if (piAiRoot) libraries["@mariozechner/pi-ai/compat"] = piAiRoot;
  }
  const shared = {
    ...libraries,
    "@mariozechner/pi-coding-agent": entry("extensions/compat/pi-coding-agent"),
  };
  return {
    ...shared,
    ...renamed("@mariozechner", "@earendil-works", shared),
    // The same module but for VERSION: the newest pi's under its package name.
    "@earendil-works/pi-coding-agent": entry("extensions/compat/pi-coding-agent-newest"),
    ...newest,
    ...renamed("typebox", "@sinclair/typebox", libraries),
    "@parley/agent": entry("index"),
  };
}

/**
 * The alias table as jiti would normalise it, marked so: jiti (pathe's `normalizeAliases`) compares
 * every alias with every other, which grows with the square of their number. Already normal:
 * no value (an absolute path) starts with a key (a package specifier); left is jiti's order, the
 * most specific (most "/") first, which its prefix matching relies on.
 */
function normalized(table: Record<string, string>): Record<string, string> {
  // A folder alias ("pi-ai/") after the files below it ("pi-ai/anthropic"), before its package's.
  const depth = (specifier: string) => specifier.split("/").filter(Boolean).length + (specifier.endsWith("/") ? 0.5 : 0);
  const out = Object.fromEntries(Object.entries(table).sort(([a], [b]) => depth(b) - depth(a)));
  Object.defineProperty(out, Symbol.for("pathe:normalizedAlias"), { value: true });
  return out;
}

export type LoadResult = { path: string; factory: ExtensionFactory } | { path: string; error: string };

type Jiti = {
  import(id: string, options?: { default?: boolean }): Promise<unknown>;
  evalModule(source: string, options: { id: string; filename: string; async: boolean; forceTranspile: boolean }): unknown;
};
let jiti: Jiti | undefined;

function getJiti(): Jiti {
  if (!jiti) {
    // Loaded on first use: a session without extensions never pays for the TS loader.
    const createJiti = loadCreateJiti();
    jiti = createJiti(import.meta.url, { alias: normalized(aliases()), interopDefault: true, moduleCache: false }) as unknown as Jiti;
  }
  return jiti;
}

/**
 * An extension module's exports. jiti imports a JavaScript ES module (`.mjs`, or `.js` under a
 * package.json with `"type": "module"`) natively, so its imports would resolve from its own
 * folder, not to the packages parley provides (or to a second copy of them): such files are
 * transpiled like TypeScript ones, which applies the aliases.
 */
async function importExtension(absolute: string): Promise<unknown> {
  const jiti = getJiti();
  if (!/\.m?js$/.test(absolute)) return jiti.import(absolute, { default: true });
  const exports = await jiti.evalModule(readFileSync(absolute, "utf8"), { id: absolute, filename: absolute, async: true, forceTranspile: true });
  const record = exports !== null && typeof exports === "object" ? (exports as { default?: unknown }) : undefined;
  return record?.default ?? exports;
}

export async function loadExtension(path: string): Promise<LoadResult> {
  const absolute = resolve(path);
  if (!existsSync(absolute)) return { path: absolute, error: `Extension file not found: ${absolute}` };
  try {
    const loaded = await whileOptimizerPaused(() => importExtension(absolute));
    const factory = typeof loaded === "function" ? loaded : (loaded as { default?: unknown } | undefined)?.default;
    if (typeof factory !== "function") {
      return { path: absolute, error: `Extension ${absolute} must default-export a function (pi) => void; it exports ${typeof factory}` };
    }
    return { path: absolute, factory: factory as ExtensionFactory };
  } catch (error) {
    return { path: absolute, error: `Failed to load extension ${absolute}: ${errorMessage(error)}` };
  }
}

/**
 * Extension files pi discovers, `<agent dir>/extensions` (user) and `./.pi/extensions` (project),
 * plus parley's earlier places, `~/.parley/extensions` and `./.parley/extensions`: each
 * `.ts`/`.js` file, and each folder holding an `index.ts`/`index.js`. Sorted by name per folder.
 * `project: false` (pi's --no-approve) leaves the project's folders out.
 */
export function discoverExtensions(
  cwd: string,
  places: { agentDir?: string; home?: string; project?: boolean } = {},
): { path: string; scope: "user" | "project" }[] {
  const home = places.home ?? homedir();
  const found: { path: string; scope: "user" | "project" }[] = [];
  const dirs = new Map<string, "user" | "project">();
  // The same folder twice (cwd is home) counts once, as the user's.
  const add = (dir: string, scope: "user" | "project"): void => {
    if (!dirs.has(resolve(dir))) dirs.set(resolve(dir), scope);
  };
  if (places.agentDir !== undefined) add(join(places.agentDir, "extensions"), "user");
  add(join(home, ".parley", "extensions"), "user");
  if (places.project !== false) {
    add(join(cwd, ".pi", "extensions"), "project");
    add(join(cwd, ".parley", "extensions"), "project");
  }
  for (const [dir, scope] of dirs) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      let isDir = false;
      try {
        isDir = statSync(full).isDirectory();
      } catch {
        continue;
      }
      if (isDir) {
        const index = ["index.ts", "index.js"].map((f) => join(full, f)).find((f) => existsSync(f));
        if (index) found.push({ path: index, scope });
      } else if (/\.(ts|js|mjs|mts)$/.test(name) && !name.endsWith(".d.ts")) {
        found.push({ path: full, scope });
      }
    }
  }
  return found;
}
