// Debian's chromium, headless, as the browser test (packages/web/test/browser.e2e.test.ts) and the
// web bench (scripts/bench/web.mjs) both drive it through playwright-core: one place for the
// binary and the flags that keep it quiet and offline (no GPU, no QUIC, no background traffic).
import { existsSync } from "node:fs";

export const CHROMIUM = "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Launches headless chromium with playwright-core's `chromium` launcher; fails clearly when it is not installed. */
export function launchChromium(chromium) {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (.ci/run does it)`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}
