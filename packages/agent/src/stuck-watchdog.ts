/**
 * SIGTERM (SIGINT, SIGHUP, SIGQUIT) and the end of stdin end parley within seconds, whatever the
 * main thread is doing: an extension in a synchronous `while (true) {}` never lets the main
 * thread's signal handlers or stdin reader run, so only SIGKILL ended such a process.
 *
 * A worker thread has an event loop of its own, which runs while the main thread is stuck:
 * - libuv delivers a signal to every loop that watches it, so the worker watches the signals parley
 *   handles (through Node's internal signal binding, which a worker gets with `--expose-internals`
 *   in its own execArgv; the main thread's handlers still run the graceful shutdown);
 * - in the modes where the end of stdin ends parley (rpc, acp) the worker reads fd 0 and forwards
 *   each chunk to the main thread, where the transport's framing takes it unchanged: so the worker
 *   sees the end of input even when the main thread reads nothing.
 *
 * After such a trigger the worker asks the main thread every PING_MS to answer. If it has not
 * answered for STUCK_MS while spending STUCK_CPU_MS of CPU (a loop), or for BLOCKED_MS whatever
 * it did (blocked in a system call), the worker kills every process group parley is tracking (it is told each
 * one as it starts and ends: messages reach the worker's loop whatever the main thread does), says
 * so on stderr, and SIGKILLs the process. A main thread that answers is never interrupted, however
 * long its shutdown takes. Once the main thread has begun to exit (its exit handlers write out
 * what stdout's reader has not taken, for up to 5 s), the process is ended EXIT_CEILING_MS later
 * if it is still there.
 *
 * Without the internal binding (a future Node), the watchdog still ends a stuck process at the end
 * of stdin; signals are then handled by the main thread alone, as before.
 */
import { constants } from "node:os";
import { Readable } from "node:stream";
import { Worker } from "node:worker_threads";

/**
 * How long the main thread may leave a ping unanswered after a signal or the end of stdin. A loop
 * turn of parley's own never takes that long; the graceful path waits for hung asynchronous
 * extension code (ABORT_GRACE_MS, 2 s, per wait) without blocking the loop, so it keeps answering
 * meanwhile and is never cut short. 5 s is "a few seconds" with room for a loaded machine.
 */
export const STUCK_MS = 5000;
/**
 * ...and has used this much CPU meanwhile (Linux; elsewhere the wall time alone counts): a loop
 * uses a CPU whenever it gets one, so on an idle machine this is reached with STUCK_MS, while a
 * main thread that is only starved (a machine loaded many times over, where a start-up's
 * synchronous module loading can hold the loop for seconds) is left alone. A stuck loop on such
 * a machine is ended later, as it gets CPU.
 */
const STUCK_CPU_MS = 4000;
/** A main thread silent this long is ended whatever its CPU use (blocked in a system call for good). */
const BLOCKED_MS = 30_000;
const PING_MS = 250;
/** After the main thread began to exit: its exit handlers write what stdout still holds, up to 5 s (transport/stdio.ts). */
export const EXIT_CEILING_MS = 10_000;

/** What the worker is told, in order. */
type ToWorker = { type: "track" | "forget"; target: number } | { type: "pong" | "exiting" } | { type: "stdin"; endsParley: boolean; shared: SharedArrayBuffer };

/** What the worker tells the main thread. */
type FromWorker = { type: "ping" | "end" | "ready" } | { type: "error"; message: string };

/**
 * fd 0's bytes cross from the worker in a ring of shared memory, not a message per chunk: a
 * message wakes the other thread's loop and is cloned, and it was a third of a dialog's round
 * trip. The worker writes at WRITTEN and wakes the main thread's Atomics.waitAsync; the main
 * thread takes from TAKEN, and wakes the worker only when it waits for room (WAITING). The
 * counters are byte totals modulo 2^32; the ring's size is a power of two that divides 2^32.
 * Its size bounds what the worker reads ahead of the main thread (a stuck one takes nothing),
 * and reading goes on while the main thread works through the last chunks.
 */
const RING_BYTES = 256 * 1024;
/** The most the main thread moves from the ring into the stream at once. */
const PIECE_BYTES = 64 * 1024;
const RING = { WRITTEN: 0, TAKEN: 1, WAITING: 2 } as const;
/** Bytes before the ring: the three counters, and one spare. */
const RING_HEADER_BYTES = 16;

// The worker's code: plain JavaScript, evaluated as CommonJS in the worker (a file of its own would
// need a place beside the bundle). Writes go straight to fd 2: a worker's process.stderr is
// forwarded through the main thread, which may be the stuck one.
const WORKER = `
"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const fs = require("node:fs");
const { stuckMs, stuckCpuMs, blockedMs, pingMs, exitCeilingMs, signals } = workerData;
const targets = new Set();
const { WRITTEN, TAKEN, WAITING } = workerData.ring;
let trigger, answered, answeredCpu, exitingAt, exitingCpu, timer, input;

// CPU time the main thread (whose thread id is the pid) has used, in ms; undefined without /proc.
function mainCpu() {
  try {
    const stat = fs.readFileSync("/proc/self/task/" + process.pid + "/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}
// Silent for \`wall\` ms while using \`cpu\` ms: stuck in a loop, or blocked for too long. A main
// thread that is merely starved of CPU (a loaded machine) is not stuck.
function stuck(wall, cpu, least) {
  return wall >= blockedMs || (wall >= least && (cpu === undefined || cpu >= stuckCpuMs));
}

function begin(what) {
  if (trigger !== undefined) return;
  trigger = what;
  answered = Date.now();
  answeredCpu = mainCpu();
  timer = setInterval(check, pingMs);
  check();
}
function check() {
  const now = Date.now();
  const cpu = mainCpu();
  const used = (from) => (cpu === undefined || from === undefined ? undefined : cpu - from);
  if (exitingAt !== undefined) {
    if (stuck(now - exitingAt, used(exitingCpu), exitCeilingMs)) act("still exiting " + Math.round((now - exitingAt) / 1000) + "s after " + trigger);
    return;
  }
  if (stuck(now - answered, used(answeredCpu), stuckMs)) act("main thread unresponsive for " + Math.round((now - answered) / 1000) + "s after " + trigger);
  else parentPort.postMessage({ type: "ping" });
}
function descendants(pid) {
  const children = new Map();
  let entries = [];
  try { entries = fs.readdirSync("/proc"); } catch {}
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue;
    let stat;
    try { stat = fs.readFileSync("/proc/" + entry + "/stat", "utf8"); } catch { continue; }
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(entry));
  }
  const found = [];
  const queue = [pid];
  while (queue.length > 0) for (const child of children.get(queue.shift()) || []) { found.push(child); queue.push(child); }
  return found;
}
function kill(target) {
  try { process.kill(target, "SIGKILL"); return true; } catch { return false; }
}
function act(why) {
  clearInterval(timer);
  for (const target of targets) {
    const escaped = descendants(Math.abs(target));
    if (!(target < 0 && kill(target))) kill(Math.abs(target));
    for (const pid of escaped) kill(pid);
  }
  try { fs.writeSync(2, "parley: " + why + "; exiting\\n"); } catch {}
  process.kill(process.pid, "SIGKILL");
}
// fd 0's bytes go to the main thread through a ring in shared memory (see RING_BYTES): written
// here, taken there, with no message per chunk. Bytes read but not yet in the ring wait in
// \`pending\` (at most a chunk: reading pauses meanwhile).
let ctl, ring, pending = [], finish;
function pump() {
  while (pending.length > 0) {
    const written = Atomics.load(ctl, WRITTEN);
    const free = ring.length - ((written - Atomics.load(ctl, TAKEN)) >>> 0);
    if (free === 0) {
      // Full: wait for the main thread to take some. WAITING is set before TAKEN is read again, so
      // a take that comes after this read sees it and notifies (no wake-up is lost).
      Atomics.store(ctl, WAITING, 1);
      const taken = Atomics.load(ctl, TAKEN);
      if (ring.length - ((written - taken) >>> 0) > 0) { Atomics.store(ctl, WAITING, 0); continue; }
      const wait = Atomics.waitAsync(ctl, TAKEN, taken);
      const again = () => { Atomics.store(ctl, WAITING, 0); pump(); };
      if (wait.async) wait.value.then(again); else again();
      return;
    }
    const chunk = pending[0];
    const n = Math.min(free, chunk.length);
    const at = written & (ring.length - 1);
    const first = Math.min(n, ring.length - at);
    ring.set(first === chunk.length ? chunk : chunk.subarray(0, first), at);
    if (n > first) ring.set(chunk.subarray(first, n), 0);
    Atomics.store(ctl, WRITTEN, (written + n) | 0);
    Atomics.notify(ctl, WRITTEN);
    if (n === chunk.length) pending.shift();
    else pending[0] = chunk.subarray(n);
  }
  if (finish) { const f = finish; finish = undefined; f(); }
  else input.resume();
}
function openStdin(endsParley, shared) {
  ctl = new Int32Array(shared, 0, 4);
  ring = new Uint8Array(shared, 16);
  const ended = (what) => { if (endsParley) begin(what); };
  try {
    const stat = fs.fstatSync(0);
    if (stat.isFIFO() || stat.isSocket()) input = new (require("node:net").Socket)({ fd: 0, readable: true, writable: false });
    else if (require("node:tty").isatty(0)) input = new (require("node:tty").ReadStream)(0);
    else input = fs.createReadStream("", { fd: 0, autoClose: false });
  } catch (error) {
    parentPort.postMessage({ type: "error", message: String(error && error.message) });
    ended("stdin failed");
    return;
  }
  input.on("data", (chunk) => {
    pending.push(chunk);
    if (pending.length === 1) pump();
    if (pending.length > 0) input.pause();
  });
  // The end (or the failure) is told once every byte before it is in the ring.
  const after = (then) => { if (pending.length === 0) then(); else finish = then; };
  input.on("end", () => after(() => { parentPort.postMessage({ type: "end" }); ended("the end of stdin"); }));
  input.on("error", (error) => after(() => { parentPort.postMessage({ type: "error", message: String(error && error.message) }); ended("stdin failed"); }));
}
parentPort.on("message", (message) => {
  switch (message.type) {
    case "track": targets.add(message.target); break;
    case "forget": targets.delete(message.target); break;
    case "pong": answered = Date.now(); answeredCpu = mainCpu(); break;
    case "exiting": exitingAt = Date.now(); exitingCpu = mainCpu(); begin("process.exit"); break;
    case "stdin": openStdin(message.endsParley, message.shared); break;
  }
});
// The internal binding prints "These APIs are for internal testing only" as a process warning:
// not the user's business. Its absence (a future Node) leaves the end-of-stdin watch only.
process.removeAllListeners("warning");
try {
  const { internalBinding } = require("internal/test/binding");
  const { Signal } = internalBinding("signal_wrap");
  for (const [name, number] of signals) {
    const handle = new Signal();
    handle.onsignal = () => begin(name);
    if (handle.start(number) !== 0) handle.close();
  }
} catch {}
parentPort.postMessage({ type: "ready" });
`;

let worker: Worker | undefined;
/** Resolves once the worker watches the signals (or could not). */
let ready: Promise<void> = Promise.resolve();
let isReady = false;
/** Reasons the worker keeps the process alive (it is unref'd otherwise): a wait for it, input wanted. */
let holds = 0;
function hold(on: boolean): void {
  holds += on ? 1 : -1;
  if (holds === (on ? 1 : 0)) {
    if (on) worker?.ref();
    else worker?.unref();
  }
}

function post(message: ToWorker): void {
  worker?.postMessage(message);
}

/**
 * Starts the watchdog (once). Call it when the main thread handles the signals it watches
 * (process-lifetime.ts), before extension code runs: a signal nobody on the main thread handled
 * would otherwise be taken by the worker's watch and delayed, not obeyed at once.
 */
export function startStuckWatchdog(): void {
  if (worker || process.platform === "win32") return;
  const signals = (["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT"] as const).map((name) => [name, constants.signals[name]]);
  try {
    worker = new Worker(WORKER, {
      eval: true,
      execArgv: ["--expose-internals"],
      workerData: { stuckMs: STUCK_MS, stuckCpuMs: STUCK_CPU_MS, blockedMs: BLOCKED_MS, pingMs: PING_MS, exitCeilingMs: EXIT_CEILING_MS, signals, ring: RING },
      // Its own stdio is never used (it writes to fd 2 itself); not piped through the main thread.
      stdout: false,
      stderr: false,
      // Small: it holds a few timers, handles and numbers.
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
    });
  } catch {
    return; // no worker threads: the main thread's own handling remains
  }
  worker.unref();
  // Its failure must not take parley down: the main thread's own handling remains.
  worker.on("error", () => {});
  let markReady: () => void = () => {};
  ready = new Promise<void>((resolve) => {
    markReady = () => {
      isReady = true;
      resolve();
    };
  });
  worker.on("message", (message: FromWorker) => {
    if (message.type === "ping") post({ type: "pong" });
    else if (message.type === "ready") markReady();
    else forwarded?.onMessage(message);
  });
  worker.on("exit", () => markReady());
  // First of the exit handlers (the stdout flush and extensions' come after): from here the process is ending.
  process.prependListener("exit", () => post({ type: "exiting" }));
}

/**
 * Resolves once the watchdog watches the signals: await it before extension code runs, for a
 * signal that came before would reach the main thread's handlers alone. It starts at once and is
 * usually ready long before; on a loaded machine this waits for it (at most READY_WAIT_MS).
 */
export async function stuckWatchdogReady(): Promise<void> {
  if (!worker || isReady) return;
  // Waiting on the worker must keep the process alive.
  hold(true);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([ready, new Promise<void>((resolve) => (timer = setTimeout(resolve, READY_WAIT_MS)))]);
  clearTimeout(timer);
  hold(false);
}

/** A worker that is not ready after this long (it should take tens of milliseconds) is not waited for. */
const READY_WAIT_MS = 10_000;

/** Tells the watchdog (if it runs) to kill `pid` (or the group it leads) should it end a stuck parley. */
export function stuckWatchdogTrack(pid: number, group: boolean): void {
  post({ type: "track", target: group ? -pid : pid });
}

/** `pid` (or its group) is over: the number may be reused. */
export function stuckWatchdogForget(pid: number, group: boolean): void {
  post({ type: "forget", target: group ? -pid : pid });
}

let forwarded: { stream: Readable; onMessage(message: FromWorker): void } | undefined;

/**
 * fd 0 as the watchdog reads it: a stream of its bytes (what process.stdin would give). The
 * worker reads from the start (up to RING_BYTES ahead, kept until the stream is read), so that it
 * sees the end of input even while extensions load. With `endsParley`, the end of input (or a
 * read error) also starts the watchdog's wait for the main thread. Undefined without the
 * watchdog.
 */
export function forwardedStdin(endsParley: boolean): Readable | undefined {
  const thread = worker;
  if (!thread) return undefined;
  if (forwarded) return forwarded.stream;
  const shared = new SharedArrayBuffer(RING_HEADER_BYTES + RING_BYTES);
  const ctl = new Int32Array(shared, 0, 4);
  const ring = new Uint8Array(shared, RING_HEADER_BYTES);
  let taken = 0;
  /** The worker's end or failure, applied once the ring is empty. */
  let last: FromWorker | undefined;
  let waiting = false;
  // Like fd 0's own handle, the worker keeps the process alive while input is wanted, not while
  // the stream is full (the reader paused) or ended.
  let wanted = false;
  const want = (on: boolean): void => {
    if (wanted === on) return;
    wanted = on;
    hold(on);
  };
  // Hands on what the ring holds while the stream wants it; then waits for more.
  const take = (): void => {
    while (wanted) {
      const written = Atomics.load(ctl, RING.WRITTEN);
      // A piece at a time: a paused reader's stream then holds at most its high-water mark and one
      // piece, and the rest stays in the ring, which bounds how far the worker reads ahead.
      const length = Math.min((written - taken) >>> 0, PIECE_BYTES);
      if (length === 0) break;
      const at = taken & (RING_BYTES - 1);
      const first = Math.min(length, RING_BYTES - at);
      const chunk = Buffer.allocUnsafe(length);
      chunk.set(ring.subarray(at, at + first));
      if (length > first) chunk.set(ring.subarray(0, length - first), first);
      taken = (taken + length) | 0;
      Atomics.store(ctl, RING.TAKEN, taken);
      if (Atomics.load(ctl, RING.WAITING) === 1) Atomics.notify(ctl, RING.TAKEN);
      if (!stream.push(chunk)) want(false);
    }
    if (!wanted) return;
    if (last !== undefined && Atomics.load(ctl, RING.WRITTEN) === taken) {
      want(false);
      if (last.type === "error") stream.destroy(new Error(last.message));
      else stream.push(null);
      return;
    }
    if (waiting) return;
    const wait = Atomics.waitAsync(ctl, RING.WRITTEN, taken);
    if (!wait.async) {
      queueMicrotask(take);
      return;
    }
    waiting = true;
    void wait.value.then(() => {
      waiting = false;
      take();
    });
  };
  const stream = new Readable({
    // The stream wants more: what it holds was taken.
    read: () => {
      want(true);
      take();
    },
  });
  forwarded = {
    stream,
    onMessage(message) {
      // Sent after the last byte was written to the ring: applied once the stream has taken it.
      if (message.type !== "end" && message.type !== "error") return;
      last = message;
      if (wanted) take();
    },
  };
  post({ type: "stdin", endsParley, shared });
  return stream;
}
