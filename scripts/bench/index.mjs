#!/usr/bin/env node
// npm run bench [-- --quick] [-- --only startup,extensions,sessions,dialog,fire-and-forget,framing,streaming,web] [-- --out FILE]
//
// Runs parley and pi (and a do-nothing Node agent as the floor) one after the other on this
// machine, prints a table of every figure with the ratio parley/pi and the targets, and
// writes the results as JSON (default .bench/results.json). Progress goes to stderr.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { runDialog } from "./dialog.mjs";
import { runExtensions } from "./extensions.mjs";
import { runFireAndForget } from "./fire-and-forget.mjs";
import { runFraming } from "./framing.mjs";
import { PARLEY_READER, PARLEY_SCRIPT, PI_PKG, ROOT, progress } from "./lib.mjs";
import { runSessions } from "./sessions.mjs";
import { runStartup } from "./startup.mjs";
import { runStreaming } from "./streaming.mjs";
import { buildRows, renderTable } from "./table.mjs";
import { runWeb } from "./web.mjs";

const FIGURES = {
  startup: { key: "startup", run: runStartup },
  extensions: { key: "extensions", run: runExtensions },
  sessions: { key: "sessions", run: runSessions },
  dialog: { key: "dialog", run: runDialog },
  "fire-and-forget": { key: "fireAndForget", run: runFireAndForget },
  framing: { key: "framing", run: runFraming },
  streaming: { key: "streaming", run: runStreaming },
  // parley only, needs chromium: not in the default list (--only web).
  web: { key: "web", run: runWeb, optIn: true },
};

function parseArgs(argv) {
  const opts = { quick: false, only: Object.keys(FIGURES).filter((name) => !FIGURES[name].optIn), out: join(ROOT, ".bench/results.json") };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const eq = a.indexOf("=");
      if (eq !== -1) return a.slice(eq + 1);
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--quick") opts.quick = true;
    // Runs per agent for the extensions and sessions figures (a loaded machine: fewer, longer runs).
    else if (a === "--runs" || a.startsWith("--runs=")) opts.runs = Number(value());
    else if (a === "--only" || a.startsWith("--only="))
      opts.only = value()
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    else if (a === "--out" || a.startsWith("--out=")) opts.out = resolve(value());
    else if (a === "--render" || a.startsWith("--render=")) opts.render = resolve(value());
    else if (a === "--help" || a === "-h") {
      process.stdout.write(
        `usage: node scripts/bench/index.mjs [--quick] [--only ${Object.keys(FIGURES).join(",")}] [--runs N] [--out FILE] [--render RESULTS.json]\n`,
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  for (const f of opts.only) if (!FIGURES[f]) throw new Error(`unknown figure ${f} (known: ${Object.keys(FIGURES).join(", ")})`);
  return opts;
}

function git(args) {
  try {
    return execFileSync("git", args, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
}

/** parley's dist must exist; warn if a package's sources are newer than its last build (others edit the tree). */
function checkBuild() {
  const bundle = join(ROOT, "packages/agent/dist/bundle/parley-cli.js");
  if (!existsSync(bundle) || !existsSync(PARLEY_READER)) {
    throw new Error("parley is not built: run `npm run build` first");
  }
  const compiled = join(ROOT, "packages/agent/dist/cli/main.js");
  if (existsSync(compiled) && statSync(compiled).mtimeMs > statSync(bundle).mtimeMs) {
    progress("warning: packages/agent/dist is newer than its bundle (bin/parley.js runs the bundle); run `npm run build` for current figures");
  }
  for (const pkg of ["protocol", "agent"]) {
    const info = join(ROOT, `packages/${pkg}/tsconfig.tsbuildinfo`);
    if (!existsSync(info)) continue;
    const built = statSync(info).mtimeMs;
    const stale = (git(["ls-files", "--cached", "--others", "--exclude-standard", `packages/${pkg}/src`]) ?? "")
      .split("\n")
      .filter((f) => f && existsSync(join(ROOT, f)) && statSync(join(ROOT, f)).mtimeMs > built);
    if (stale.length)
      progress(`warning: ${stale.length} file(s) in packages/${pkg}/src newer than its build (e.g. ${stale[0]}); run \`npm run build\` for current figures`);
  }
}

function header(meta) {
  return `parley vs pi ${meta.piVersion}: node ${meta.node}, ${meta.cores} × ${meta.cpu}, commit ${meta.commit}${meta.dirty ? " (+local changes)" : ""}, ${meta.durationS} s, load avg ${meta.loadAvg1mAtStart} → ${meta.loadAvg1mAtEnd}`;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.render) {
    // Print the table of an earlier run again, without running anything.
    const saved = JSON.parse(readFileSync(opts.render, "utf8"));
    const quick = saved.meta?.quick ?? false;
    process.stdout.write(`${header(saved.meta)}\n\n${renderTable(buildRows({ ...saved.results, quick }), { quick })}\n`);
    return;
  }
  checkBuild();
  const started = Date.now();
  const meta = {
    date: new Date().toISOString(),
    quick: opts.quick,
    node: process.version,
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memGiB: Math.round(totalmem() / 2 ** 30),
    loadAvg1mAtStart: Math.round(loadavg()[0] * 100) / 100,
    commit: git(["rev-parse", "--short", "HEAD"]),
    dirty: (git(["status", "--porcelain", "--", "packages"]) ?? "") !== "",
    parleyBin: PARLEY_SCRIPT,
    piVersion: JSON.parse(readFileSync(join(PI_PKG, "package.json"), "utf8")).version,
  };
  if (loadavg()[0] > cpus().length * 0.5) {
    progress(`warning: load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores: other work on this machine will skew the figures`);
  }
  progress(`${opts.quick ? "quick" : "full"} run: ${opts.only.join(", ")} (node ${meta.node}, ${meta.cores} × ${meta.cpu})`);
  const results = { quick: opts.quick };
  const errors = {};
  for (const name of opts.only) {
    const fig = FIGURES[name];
    progress(`== ${name}`);
    try {
      results[fig.key] = await fig.run({ quick: opts.quick, ...(opts.runs ? { runs: opts.runs } : {}) });
    } catch (err) {
      errors[name] = err instanceof Error ? err.message : String(err);
      progress(`${name} failed: ${errors[name]}`);
    }
  }
  meta.durationS = Math.round((Date.now() - started) / 100) / 10;
  meta.loadAvg1mAtEnd = Math.round(loadavg()[0] * 100) / 100;
  const rows = buildRows(results);
  mkdirSync(dirname(opts.out), { recursive: true });
  writeFileSync(opts.out, `${JSON.stringify({ meta, errors, rows: rows.map(({ values, ...r }) => ({ ...r, values })), results }, null, 2)}\n`);
  process.stdout.write(`\n${header(meta)}\n\n`);
  process.stdout.write(`${renderTable(rows, { quick: opts.quick })}\n`);
  for (const [name, msg] of Object.entries(errors)) process.stdout.write(`ERROR in ${name}: ${msg.split("\n")[0]}\n`);
  process.stdout.write(`\nresults: ${opts.out}\n`);
  progress("done");
  if (Object.keys(errors).length) process.exitCode = 1;
}

main().catch((err) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
});
