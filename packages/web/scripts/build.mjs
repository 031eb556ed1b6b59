// Builds the page's script and styles into dist/page (served by `parley --mode web`):
// one minified IIFE (no eval, no inline script: the page's CSP allows only 'self'), and the CSS.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist", "page");
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(root, "src", "main.ts")],
  outfile: join(out, "app.js"),
  bundle: true,
  format: "iife",
  platform: "browser",
  target: "es2020",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
});
copyFileSync(join(root, "src", "app.css"), join(out, "app.css"));
if (process.argv.includes("--sizes")) {
  for (const name of ["app.js", "app.css"]) console.log(`${name}: ${statSync(join(out, name)).size} bytes`);
}
