// Bundles the agent's compiled output (packages/agent/dist, from `tsc -b`) into
// packages/agent/dist/bundle, which bin/parley.js runs. Why: Node 20's ES module loader pays for
// every file it resolves, reads and links; ~60 small modules on the start-up path cost ~20 ms.
// Code splitting keeps every lazy `import()` lazy (the loop, the tools, TypeBox, the extension
// loader load when first needed, as before). Packages from node_modules stay external: they are
// loaded from their own files, once, by Node. The public entry points (the library index and the
// module extensions get for "@mariozechner/pi-coding-agent") are entries of the same build, so an
// extension and the agent share one instance of every parley module.
import { build } from "esbuild";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const agent = join(root, "packages/agent");
const dist = join(agent, "dist");
const outdir = join(dist, "bundle");

const pkg = JSON.parse(readFileSync(join(agent, "package.json"), "utf8"));
// Every dependency but parley's own packages stays a bare import (subpaths too).
const external = Object.keys(pkg.dependencies)
  .filter((name) => !name.startsWith("@parley/"))
  .flatMap((name) => [name, `${name}/*`]);

rmSync(outdir, { recursive: true, force: true });
const started = performance.now();
const { outputFiles } = await build({
  entryPoints: {
    "cli/main": join(dist, "cli/main.js"),
    index: join(dist, "index.js"),
    "extensions/compat/pi-coding-agent": join(dist, "extensions/compat/pi-coding-agent.js"),
  },
  outdir,
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external,
  logLevel: "warning",
  write: false,
});
for (const file of outputFiles) {
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(file.path, asciiOnly(file.text));
}
process.stderr.write(`build-bundle: packages/agent/dist/bundle in ${(performance.now() - started).toFixed(0)} ms\n`);

/**
 * esbuild escapes non-ASCII characters in strings but leaves them in regular expressions and kept
 * comments. One such character makes Node decode the whole file into a two-byte string, which
 * V8 then scans more slowly (~2 ms of start-up for the largest chunk). A \uXXXX escape means the
 * same in a regular expression, a string or a comment.
 */
function asciiOnly(text) {
  return text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
