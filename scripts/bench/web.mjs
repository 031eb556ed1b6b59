// Web mode (parley only: pi has none). Opt-in: npm run bench -- --only web [--quick]
// - stream: chromium (playwright-core) shows a reply of N deltas (16,000 in a full run) from the
//   scripted model; the page records every animation frame meanwhile. Reported: the time from
//   Enter to the last word on screen, and the longest and 99th-percentile gaps between frames
//   (a gap is time the page could not paint or answer input).
// - fan-out: 10 WebSocket clients on one server; one sends /bench-status N; time until every
//   client has read the last setStatus record.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH_EXT, PARLEY_SCRIPT, ROOT, percentile, progress } from "./lib.mjs";
import { writeSession } from "./sessions.mjs";
import { launchChromium } from "../headless-chromium.mjs";

const require = createRequire(join(ROOT, "package.json"));

function startWeb(args, env = {}, sessions = false) {
  const home = mkdtempSync(join(tmpdir(), "parley-bench-web-"));
  const child = spawn(process.execPath, [PARLEY_SCRIPT, "--mode", "web", "--web-port", "0", ...(sessions ? [] : ["--no-session"]), ...args], {
    cwd: home,
    env: { ...process.env, HOME: home, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
  const url = new Promise((resolve, reject) => {
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d) => {
      out += d;
      if (out.includes("\n")) resolve(new URL(out.slice(0, out.indexOf("\n"))));
    });
    child.once("exit", (code) => reject(new Error(`parley --mode web exited (${code}): ${stderr}`)));
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  return { home, url, stop };
}

async function stream(deltas) {
  const { chromium } = require("playwright-core");
  const dir = mkdtempSync(join(tmpdir(), "parley-bench-script-"));
  const script = join(dir, "script.json");
  writeFileSync(script, JSON.stringify([Array.from({ length: deltas }, (_, i) => `w${i}`).join(" ")]));
  const server = startWeb(["--model-script", script]);
  const browser = await launchChromium(chromium);
  try {
    const url = await server.url;
    const page = await browser.newPage();
    page.setDefaultTimeout(300_000);
    await page.goto(url.href);
    await page.locator(".connection[data-state=open]").waitFor();
    await page.evaluate(() => {
      const frames = [];
      window.__frames = frames;
      const tick = (t) => {
        frames.push(t);
        if (!window.__stop) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    // The page's own work (script, style, layout), which machine load inflates less than wall time.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Performance.enable");
    const metrics = async () => Object.fromEntries((await cdp.send("Performance.getMetrics")).metrics.map((m) => [m.name, m.value]));
    const box = page.getByRole("textbox", { name: "Message" });
    await box.fill("stream please");
    const before = await metrics();
    const started = Date.now();
    await box.press("Enter");
    // Polled slowly: the probe's own work must not count as the page's.
    const lastWord = `w${deltas - 1}`;
    await page.waitForFunction(
      (word) =>
        document.querySelector(".message-assistant:last-of-type")?.textContent?.includes(word) && document.querySelector(".activity")?.textContent === "idle",
      lastWord,
      { polling: 250, timeout: 300_000 },
    );
    const ms = Date.now() - started;
    const after = await metrics();
    const busy = (key) => (after[key] - before[key]) * 1000;
    const pageWorkMs = busy("ScriptDuration") + busy("RecalcStyleDuration") + busy("LayoutDuration");
    const frames = await page.evaluate(() => {
      window.__stop = true;
      return window.__frames;
    });
    const gaps = frames.slice(1).map((t, i) => t - frames[i]);
    return { deltas, ms, pageWorkMs, frames: frames.length, maxFrameGapMs: Math.max(...gaps), p99FrameGapMs: percentile(gaps, 99) };
  } finally {
    await browser.close();
    await server.stop();
  }
}

async function fanOut(clients, n) {
  const { WebSocket } = require("ws");
  const server = startWeb(["-e", BENCH_EXT]);
  const sockets = [];
  try {
    const url = await server.url;
    const wsUrl = `ws://${url.host}/ws${url.search}`;
    const lastText = `"statusText":"s${n - 1}"`;
    const done = [];
    for (let i = 0; i < clients; i++) {
      const socket = new WebSocket(wsUrl);
      await new Promise((resolve, reject) => {
        socket.once("open", resolve);
        socket.once("error", reject);
      });
      let count = 0;
      done.push(
        new Promise((resolve) =>
          socket.on("message", (data) => {
            const text = String(data);
            if (text.includes('"method":"setStatus"')) count++;
            if (text.includes(lastText)) resolve(count);
          }),
        ),
      );
      sockets.push(socket);
    }
    const started = performance.now();
    sockets[0].send(JSON.stringify({ type: "prompt", message: `/bench-status ${n}` }));
    const counts = await Promise.all(done);
    const ms = performance.now() - started;
    if (counts.some((c) => c !== n)) throw new Error(`fan-out: clients read ${counts.join(", ")} setStatus records, expected ${n} each`);
    return { clients, n, ms, recordsPerSec: ((n * clients) / ms) * 1000 };
  } finally {
    for (const socket of sockets) socket.terminate();
    await server.stop();
  }
}

/**
 * A stored session of `entries` messages chosen in the Sessions list: time from the click until its
 * newest message is on screen; then "New session": time until the conversation is empty.
 */
async function openSession(entries) {
  const { chromium } = require("playwright-core");
  const dir = mkdtempSync(join(tmpdir(), "parley-bench-sessions-"));
  writeSession(dir, entries, 200);
  const server = startWeb(["--session-dir", dir], {}, true);
  const browser = await launchChromium(chromium);
  try {
    const url = await server.url;
    const page = await browser.newPage();
    page.setDefaultTimeout(300_000);
    await page.goto(url.href);
    await page.locator(".connection[data-state=open]").waitFor();
    const nav = page.getByRole("navigation", { name: "Sessions" });
    const entry = nav.getByRole("button", { name: /question 0/ });
    await entry.waitFor();
    const last = entries - 1;
    const started = Date.now();
    await entry.click();
    await page.locator(".message", { hasText: `answer ${last}:` }).waitFor();
    const openMs = Date.now() - started;
    const away = Date.now();
    await nav.getByRole("button", { name: "New session" }).click();
    await page.locator(".message").first().waitFor({ state: "detached" });
    return { entries, openMs, switchAwayMs: Date.now() - away };
  } finally {
    await browser.close();
    await server.stop();
  }
}

export async function runWeb({ quick }) {
  const deltas = quick ? 2000 : 16_000;
  progress(`web: streaming ${deltas} deltas into chromium`);
  const streamed = await stream(deltas);
  progress(
    `web: ${deltas} deltas in ${streamed.ms} ms (page work ${streamed.pageWorkMs.toFixed(0)} ms), longest frame gap ${streamed.maxFrameGapMs.toFixed(0)} ms`,
  );
  const n = quick ? 2000 : 20_000;
  progress(`web: fan-out of ${n} setStatus records to 10 clients`);
  const fan = await fanOut(10, n);
  progress(`web: fan-out ${fan.ms.toFixed(0)} ms (${Math.round(fan.recordsPerSec)} records/s delivered)`);
  progress("web: opening a 1,000-message session from the Sessions list");
  const session = await openSession(1000);
  progress(`web: opened in ${session.openMs} ms, left for a new session in ${session.switchAwayMs} ms`);
  return { stream: streamed, fanOut: fan, session };
}
