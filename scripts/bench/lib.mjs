// Shared helpers for the benchmark: paths, agent processes, a linear line splitter for the
// client side, /proc readers, statistics and progress output.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(BENCH_DIR, "../..");
export const FIXTURES = join(BENCH_DIR, "fixtures");
export const BENCH_EXT = join(FIXTURES, "bench-ext.js");
// The reference: the newest pi (the `pi-newest` devDependency, pi 1.6), on the same Node.
export const PI_PKG = join(ROOT, "node_modules/pi-newest");
export const PI_SCRIPT = join(PI_PKG, "dist/cli.js");
export const PARLEY_SCRIPT = join(ROOT, "packages/agent/bin/parley.js");
export const FLOOR_SCRIPT = join(FIXTURES, "floor-agent.mjs");
export const PARLEY_READER = join(ROOT, "packages/protocol/dist/jsonl.js");
export const PI_READER = join(PI_PKG, "dist/modes/rpc/jsonl.js");

/**
 * The agents under test. Each is started as `node SCRIPT ARGS…` (not through the .bin shim or
 * `env`), so the child's pid is the node process whose /proc/PID/status we read.
 */
export const AGENTS = {
  parley: { name: "parley", script: PARLEY_SCRIPT, args: ["--mode", "rpc", "--no-session"] },
  pi: { name: "pi", script: PI_SCRIPT, args: ["--mode", "rpc", "--no-session"] },
  floor: { name: "floor", script: FLOOR_SCRIPT, args: [] },
};

// ------------------------------------------------------------------------------------------------
// progress and statistics

const t0 = performance.now();
export function progress(message) {
  const s = ((performance.now() - t0) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[bench ${s}s] ${message}\n`);
}

export function median(values) {
  const v = values.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/** Nearest-rank percentile, p in [0, 100]. */
export function percentile(values, p) {
  const v = [...values].sort((a, b) => a - b);
  if (v.length === 0) return null;
  const rank = Math.min(v.length - 1, Math.max(0, Math.ceil((p / 100) * v.length) - 1));
  return v[rank];
}

export const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

// ------------------------------------------------------------------------------------------------
// /proc

/** Fields of /proc/PID/status in KiB (VmRSS, VmHWM, …), or null if the process is gone. */
export function procStatus(pid) {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return null;
  }
  const out = {};
  for (const m of text.matchAll(/^(Vm\w+):\s+(\d+) kB$/gm)) out[m[1]] = Number(m[2]);
  return out;
}

export const kibToMiB = (kib) => (kib == null ? null : kib / 1024);

/**
 * CPU time of a process's main thread so far, in ms (the first field of
 * /proc/PID/task/PID/schedstat: time on a CPU, in ns), or null if the process is gone. Unlike wall
 * time it does not grow with the machine's load: the figure for a busy, shared machine.
 */
export function mainThreadCpuMs(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
  } catch {
    return null;
  }
}

// ------------------------------------------------------------------------------------------------
// client-side line splitting: linear, LF only (same contract as the agents' readers)

export class LineSplitter {
  #pending = [];
  #pendingBytes = 0;
  /**
   * `onLineEnd(head)`, if given, hears of each line the moment its LF arrives, with the line's
   * first HEAD_BYTES bytes as text, before the whole line is put together: a big answer is timed
   * when the agent has delivered it, not after the client has built a 100 MB string from it.
   */
  constructor(onLine, onLineEnd) {
    this.onLine = onLine;
    this.onLineEnd = onLineEnd;
  }
  push(buf) {
    let start = 0;
    for (;;) {
      const lf = buf.indexOf(10, start);
      if (lf === -1) break;
      let line;
      // The whole line's bytes with its LF, the pieces from earlier chunks included.
      const bytes = this.#pendingBytes + lf - start + 1;
      if (this.onLineEnd) this.onLineEnd(this.#head(buf, start, lf));
      if (this.#pending.length === 0) {
        line = buf.toString("utf8", start, lf);
      } else {
        this.#pending.push(buf.subarray(start, lf));
        line = Buffer.concat(this.#pending, bytes - 1).toString("utf8");
        this.#pending = [];
        this.#pendingBytes = 0;
      }
      this.onLine(line, bytes);
      start = lf + 1;
    }
    if (start < buf.length) {
      this.#pending.push(buf.subarray(start));
      this.#pendingBytes += buf.length - start;
    }
  }
  /** The first HEAD_BYTES bytes of the line ending at `lf` (it may begin in earlier chunks), as text. */
  #head(buf, start, lf) {
    const pieces = [];
    let have = 0;
    for (const piece of [...this.#pending, buf.subarray(start, lf)]) {
      if (have >= HEAD_BYTES) break;
      const take = piece.subarray(0, HEAD_BYTES - have);
      pieces.push(take);
      have += take.length;
    }
    return Buffer.concat(pieces, have).toString("utf8");
  }
}

/** How much of a line `onLineEnd` sees: enough for a record's type and id. */
export const HEAD_BYTES = 200;

// ------------------------------------------------------------------------------------------------
// agent processes

function cleanEnv(home) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    // No real provider keys: both agents run offline, with the same environment.
    if (/API_KEY|_TOKEN$/i.test(k)) continue;
    if (k.startsWith("npm_")) continue;
    env[k] = v;
  }
  return {
    ...env,
    HOME: home,
    PI_CODING_AGENT_DIR: join(home, ".pi", "agent"),
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
  };
}

/**
 * Start an agent with a private temp HOME (also its cwd), without a session unless `sessionFile`. `onLine(line, bytes)` sees every stdout
 * line; `stdoutBytes` counts raw bytes. Returns helpers to send records and wait for lines.
 */
export function startAgent(agent, extraArgs = [], { onLine, sessionFile = false } = {}) {
  const home = mkdtempSync(join(tmpdir(), `bench-${agent.name}-`));
  const spawnedAt = performance.now();
  // sessionFile: the run names its own session file (--session), so --no-session goes.
  const args = sessionFile ? agent.args.filter((a) => a !== "--no-session") : agent.args;
  const child = spawn(process.execPath, [agent.script, ...args, ...extraArgs], {
    cwd: home,
    env: cleanEnv(home),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d) => {
    if (stderr.length < 64 * 1024) stderr += d;
  });
  child.stdin.on("error", () => {});
  /** Pending waitLine calls; an exit fails them at once instead of at their timeout. */
  const waiters = new Set();
  /** Pending lineEndAt calls (no timeout of their own: a waitLine for the same line has one). */
  const endWaiters = new Set();
  let exitInfo = null;
  let closed = false;
  const proc = {
    agent,
    child,
    pid: child.pid,
    home,
    spawnedAt,
    stdoutBytes: 0,
    /** Current line handler; swap it per phase. */
    onLine: onLine ?? (() => {}),
    stderr: () => stderr,
    send(record) {
      proc.sendLine(JSON.stringify(record));
    },
    /** Writes one line of JSON text as it is. */
    sendLine(text) {
      child.stdin.write(`${text}\n`);
    },
    exited: new Promise((res) =>
      child.on("exit", (code, signal) => {
        exitInfo = { code, signal };
        res(exitInfo);
      }),
    ),
    /** Resolves with the first line for which `match(line)` is true (checked on new lines only). */
    waitLine(match, ms = 30_000, what = "a line") {
      return new Promise((res, rej) => {
        const waiter = {
          match,
          done(line) {
            clearTimeout(timer);
            waiters.delete(waiter);
            res(line);
          },
          fail(why) {
            clearTimeout(timer);
            waiters.delete(waiter);
            const err = new Error(`${agent.name}: ${why} waiting for ${what}\nstderr:\n${stderr.slice(-2000)}`);
            err.short = why;
            err.stderr = stderr;
            rej(err);
          },
        };
        const timer = setTimeout(() => waiter.fail(`timed out after ${ms} ms`), ms);
        waiters.add(waiter);
        if (closed) waiter.fail(exitDescription());
      });
    },
    /**
     * Resolves with the time (performance.now()) at which the first line whose first HEAD_BYTES
     * bytes match `match` was complete on the pipe, before the client turned it into a string.
     */
    lineEndAt(match) {
      return new Promise((res) => {
        const waiter = {
          match,
          done(at) {
            endWaiters.delete(waiter);
            res(at);
          },
        };
        endWaiters.add(waiter);
      });
    },
    status: () => procStatus(child.pid),
    /** Close stdin, wait for exit (SIGKILL after `ms`), remove the temp HOME. */
    async stop(ms = 5000) {
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), ms);
      await proc.exited;
      clearTimeout(timer);
      rmSync(home, { recursive: true, force: true });
    },
  };
  function exitDescription() {
    const m = /\b(E[A-Z]{3,}|JavaScript heap out of memory|RangeError[^\n]*|TypeError[^\n]*)/.exec(stderr);
    const how = exitInfo.signal ? `killed by ${exitInfo.signal}` : `exited with code ${exitInfo.code}`;
    return `${how}${m ? ` (${m[1]})` : ""}`;
  }
  // "close" comes after "exit" and after stdout has delivered its last line.
  child.on("close", () => {
    closed = true;
    for (const w of [...waiters]) w.fail(exitDescription());
  });
  const splitter = new LineSplitter(
    (line, bytes) => {
      proc.onLine(line, bytes);
      if (waiters.size === 0) return;
      for (const w of [...waiters]) if (w.match(line)) w.done(line);
    },
    (head) => {
      for (const w of [...endWaiters]) if (w.match(head)) w.done(performance.now());
    },
  );
  child.stdout.on("data", (buf) => {
    proc.stdoutBytes += buf.length;
    splitter.push(buf);
  });
  return proc;
}

/** A response line for command id `id` (cheap check, then parse). */
export function isResponseTo(id) {
  const needle = `"id":${JSON.stringify(id)}`;
  return (line) => line.includes('"type":"response"') && line.includes(needle) && JSON.parse(line).id === id;
}

/** Send a command and wait for its response record (parsed). Throws on success:false. */
export async function request(proc, command, ms = 30_000) {
  const id = `b${Math.random().toString(36).slice(2)}`;
  const wait = proc.waitLine(isResponseTo(id), ms, `the response to ${command.type}`);
  proc.send({ ...command, id });
  const rec = JSON.parse(await wait);
  if (rec.success === false) throw new Error(`${proc.agent.name}: ${command.type} failed: ${rec.error}`);
  return rec;
}

/** Waits for the bench extension's `bench-result:` notify and returns its payload. */
export function benchResult(proc, ms) {
  return proc
    .waitLine((line) => line.includes('"method":"notify"') && line.includes("bench-result:"), ms, "the bench result")
    .then((line) => JSON.parse(JSON.parse(line).message.slice("bench-result:".length)));
}

/**
 * The agents in the order round `r` runs them: rotated by one each round, so no agent always goes
 * first (the first run after the machine was idle is often the slowest).
 */
export function roundOrder(names, r) {
  const k = r % names.length;
  return [...names.slice(k), ...names.slice(0, k)];
}

/**
 * Runs `once(agent)` `runs` times for each agent in turn (interleaved, so drift in machine load
 * hits all alike, and in a rotating order). Returns the raw samples and `pick(key)`, the median of
 * a field per agent.
 */
export async function sampleAgents(names, runs, once, describe) {
  const samples = Object.fromEntries(names.map((x) => [x, []]));
  for (let r = 0; r < runs; r++) {
    for (const name of roundOrder(names, r)) {
      const s = await once(AGENTS[name]);
      samples[name].push(s);
      progress(describe(r, name, s));
    }
  }
  const pick = (key) => Object.fromEntries(names.map((x) => [x, median(samples[x].map((s) => s[key]))]));
  return { samples, pick };
}
