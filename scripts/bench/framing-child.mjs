// One framing case in a fresh process, so its peak RSS (VmHWM) is its own:
//   node framing-child.mjs READER CASE
// READER: parley | pi | baseline. CASE: line:<MiB> (one line of that many MiB) or
// lines:<count> (count lines of 100 bytes each). Input is fed to the reader's `data` handler in
// 64 KiB chunks, each a fresh Buffer (as a real stream delivers them), then `end`.
// No warm-up: it would leave a few MiB of heap behind and skew the peak RSS.
// Prints one JSON object: { ms, lines, chars, hwmKiB, startRssKiB }.
import { EventEmitter } from "node:events";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { PARLEY_READER, PI_READER } from "./lib.mjs";

const CHUNK = 64 * 1024;
const LINE_BYTES = 100;

function status() {
  const text = readFileSync("/proc/self/status", "utf8");
  const get = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB$`, "m").exec(text)?.[1]);
  return { rss: get("VmRSS"), hwm: get("VmHWM") };
}

/** The plain linear baseline: Buffer.indexOf over each new chunk, one toString per line. */
function attachBaseline(stream, onLine) {
  let pending = [];
  let pendingBytes = 0;
  stream.on("data", (buf) => {
    let start = 0;
    for (;;) {
      const lf = buf.indexOf(10, start);
      if (lf === -1) break;
      if (pending.length === 0) onLine(buf.toString("utf8", start, lf));
      else {
        pending.push(buf.subarray(start, lf));
        onLine(Buffer.concat(pending, pendingBytes + lf - start).toString("utf8"));
        pending = [];
        pendingBytes = 0;
      }
      start = lf + 1;
    }
    if (start < buf.length) {
      pending.push(buf.subarray(start));
      pendingBytes += buf.length - start;
    }
  });
  stream.on("end", () => {
    if (pendingBytes > 0) onLine(Buffer.concat(pending, pendingBytes).toString("utf8"));
  });
}

async function loadReader(name) {
  if (name === "baseline") return attachBaseline;
  if (name === "parley") return (await import(pathToFileURL(PARLEY_READER).href)).attachJsonlReader;
  if (name === "pi") return (await import(pathToFileURL(PI_READER).href)).attachJsonlLineReader;
  throw new Error(`unknown reader ${name}`);
}

/**
 * The input as a function chunk(i) → Buffer, built on the fly from a template so the input
 * itself never sits in memory whole.
 */
function makeInput(spec) {
  const [kind, value] = spec.split(":");
  if (kind === "line") {
    const total = Number(value) * 1024 * 1024; // bytes including the final LF
    const head = Buffer.from('{"type":"big","data":"');
    const tail = Buffer.from('"}\n');
    const fill = Buffer.alloc(CHUNK, "a");
    const count = Math.ceil(total / CHUNK);
    return {
      count,
      expectLines: 1,
      chunk(i) {
        const len = Math.min(CHUNK, total - i * CHUNK);
        const buf = Buffer.allocUnsafe(len);
        fill.copy(buf, 0, 0, len);
        if (i === 0) head.copy(buf, 0);
        if (i === count - 1) tail.copy(buf, len - tail.length);
        return buf;
      },
    };
  }
  if (kind === "lines") {
    const lines = Number(value);
    const total = lines * LINE_BYTES;
    const proto = Buffer.from(
      `{"type":"extension_ui_request","method":"setStatus","statusKey":"k","statusText":"${"x".repeat(LINE_BYTES)}`.slice(0, LINE_BYTES - 3) + '"}\n',
    );
    if (proto.length !== LINE_BYTES) throw new Error(`line is ${proto.length} bytes`);
    // A window of repeated lines long enough to copy any 64 KiB slice from any phase.
    const window = Buffer.alloc(CHUNK + LINE_BYTES);
    for (let o = 0; o < window.length; o += LINE_BYTES) proto.copy(window, o);
    const count = Math.ceil(total / CHUNK);
    return {
      count,
      expectLines: lines,
      chunk(i) {
        const offset = i * CHUNK;
        const len = Math.min(CHUNK, total - offset);
        const buf = Buffer.allocUnsafe(len);
        const phase = offset % LINE_BYTES;
        window.copy(buf, 0, phase, phase + len);
        return buf;
      },
    };
  }
  throw new Error(`unknown case ${spec}`);
}

const [readerName, spec] = process.argv.slice(2);
const attach = await loadReader(readerName);

const input = makeInput(spec);
const stream = new EventEmitter();
let lines = 0;
let chars = 0;
attach(stream, (line) => {
  lines++;
  chars += line.length;
});
const start = status();
const t0 = performance.now();
for (let i = 0; i < input.count; i++) stream.emit("data", input.chunk(i));
stream.emit("end");
const ms = performance.now() - t0;
const end = status();
if (lines !== input.expectLines) {
  process.stderr.write(`${readerName} ${spec}: expected ${input.expectLines} lines, got ${lines}\n`);
  process.exit(3);
}
process.stdout.write(`${JSON.stringify({ ms, lines, chars, hwmKiB: end.hwm, startRssKiB: start.rss })}\n`);
