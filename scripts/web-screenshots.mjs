// Regenerates the web page's committed screenshots (packages/web/screenshots/), on purpose: the
// Chromium tests write theirs to a temp folder unless PARLEY_WEB_SCREENSHOTS names one. Run after
// `npm run build`, look at the pictures, and commit them only for an intended change of the page.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const result = spawnSync(
  process.execPath,
  [join(root, "node_modules/vitest/vitest.mjs"), "run", "packages/web/test/browser.e2e.test.ts", "packages/web/test/web-gui.e2e.test.ts"],
  { cwd: root, stdio: "inherit", env: { ...process.env, PARLEY_WEB_SCREENSHOTS: join(root, "packages/web/screenshots") } },
);
process.exit(result.status ?? 1);
