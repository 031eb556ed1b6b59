// The modules an installed library package exports (its package.json `exports`, wildcard
// subpaths expanded to the files they match) and the kind of each value export. Shared by
// the test that checks what extensions get (newest-libraries.e2e.test.ts).
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const agent = join(dirname(fileURLToPath(import.meta.url)), "..");

/** An installed package's folder, found upward from the agent package. */
export function packageDir(name) {
  for (let dir = agent; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "node_modules", name, "package.json"))) return join(dir, "node_modules", name);
    if (dirname(dir) === dir) throw new Error(`${name} is not installed`);
  }
}

/** "function" | "class" | "object" | "string" | "number" | "boolean" | … (typeof otherwise). */
export function valueKind(value) {
  if (typeof value === "function") return /^class\b/.test(Function.prototype.toString.call(value)) ? "class" : "function";
  if (value !== null && typeof value === "object") return "object";
  return typeof value;
}

/** Every module of a package: { subpath: "." | "./utils/uuid", file, load() }. */
export async function libraryModules(name) {
  const dir = packageDir(name);
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const pick = (target) => (typeof target === "string" ? target : target && (target.import ?? target.default ?? target.node));
  const entries = manifest.exports === undefined ? [[".", manifest.module ?? manifest.main ?? "index.js"]] : Object.entries(manifest.exports);
  const out = [];
  for (const [subpath, target] of entries) {
    const file = pick(target);
    if (typeof file !== "string" || subpath.endsWith(".json") || !file.endsWith(".js")) continue;
    if (!subpath.includes("*")) {
      out.push({ subpath, file: join(dir, file) });
      continue;
    }
    // "./utils/*" → "./dist/utils/*.js": every matching file, in subfolders too (a * matches "/").
    const [before, after] = file.split("*");
    const walk = (folder, prefix) => {
      for (const entry of readdirSync(folder).sort()) {
        const full = join(folder, entry);
        if (statSync(full).isDirectory()) walk(full, `${prefix}${entry}/`);
        else if (entry.endsWith(after) && !entry.endsWith(`.d${after}`))
          out.push({ subpath: subpath.replace("*", prefix + entry.slice(0, -after.length)), file: full });
      }
    };
    walk(join(dir, before), "");
  }
  return out.map((m) => ({ ...m, load: () => import(pathToFileURL(m.file).href) }));
}
