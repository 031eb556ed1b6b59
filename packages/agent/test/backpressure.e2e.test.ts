/**
 * A client that stops reading: parley's memory stays near idle however much it has to say (the
 * model's reply and the bash command's output wait at their source; extension floods are
 * coalesced), and once the client reads, every delta arrives in order and the UI ends the same.
 *
 * Memory is read from /proc/PID/status (VmRSS, VmHWM: the peak). The unread phase lasts until
 * parley stops using CPU: it is then either blocked on the full pipe (with back-pressure) or done
 * producing everything into memory (without); the check does not depend on the machine's speed.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { attachJsonlReader } from "@parley/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { chunkText } from "../src/models/reply-stream.js";
import { replacementKey } from "../src/transport/outbound-queue.js";
import { PARLEY_BIN, spawnParley, type AgentProcess, type Rec } from "./helpers/spawn.js";
import { poll } from "./helpers/waits.js";

/** How far above its idle RSS parley may go while the client does not read. */
const MAX_GROWTH_KB = 100 * 1024;
const MINUTE = 60_000;

function memoryKb(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? NaN);
  return { rss: field("VmRSS"), hwm: field("VmHWM") };
}

/** CPU time used so far, in clock ticks (utime + stime). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * Resolves once the process has used no CPU for `quietPolls` polls in a row (blocked on the full
 * pipe, or finished): no event says "parley is blocked", so its CPU time is polled. A ceiling,
 * not a failure: the memory checks that follow hold either way.
 */
async function untilIdle(pid: number, quietPolls = 10, ceilingMs = 3 * MINUTE): Promise<void> {
  const end = Date.now() + ceilingMs;
  let last = cpuTicks(pid);
  let quiet = 0;
  while (quiet < quietPolls && Date.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = cpuTicks(pid);
    quiet = now === last ? quiet + 1 : 0;
    last = now;
  }
}

/**
 * A spawned parley read without keeping its records (a 10 MB reply is a quarter of a million
 * of them): each record goes to `onRecord`, and waiters are woken by predicate.
 */
interface LeanAgent {
  child: ChildProcessWithoutNullStreams;
  send(record: object): void;
  /** Resolves with the first record from now on that matches. */
  next(match: (r: Rec) => boolean, ms?: number): Promise<Rec>;
  onRecord: (r: Rec) => void;
  stderr(): string;
}

function spawnLean(args: string[]): LeanAgent {
  const home = mkdtempSync(join(tmpdir(), "parley-home-"));
  const child = spawn(PARLEY_BIN, ["--mode", "rpc", "--no-session", ...args], {
    cwd: home,
    env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent") },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdin.on("error", () => {});
  const waiters = new Set<(r: Rec) => boolean>();
  const agent: LeanAgent = {
    child,
    send: (record) => child.stdin.write(`${JSON.stringify(record)}\n`),
    next: (match, ms = 3 * MINUTE) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for a record\nstderr:\n${stderr}`));
        }, ms);
        const check = (r: Rec): boolean => {
          if (!match(r)) return false;
          clearTimeout(timer);
          resolve(r);
          return true;
        };
        waiters.add(check);
      }),
    onRecord: () => {},
    stderr: () => stderr,
  };
  attachJsonlReader(child.stdout, (line) => {
    const r = JSON.parse(line) as Rec;
    agent.onRecord(r);
    for (const check of [...waiters]) if (check(r)) waiters.delete(check);
  });
  return agent;
}

const running: { kill(): void }[] = [];
afterEach(() => {
  for (const a of running.splice(0)) a.kill();
});

describe("a client that stops reading", () => {
  it(
    "a 10 MB scripted reply waits at its source: RSS stays near idle, then every delta arrives in order",
    async () => {
      // Long numbered words: a quarter of a million deltas, each one distinct.
      const words: string[] = [];
      let length = 0;
      for (let i = 0; length < 10 * 1024 * 1024; i++) {
        const word = ` ${i.toString(36)}:${"abcdefghijklmnopqrstuvwxyz0123456789".slice(i % 7)}`;
        words.push(word);
        length += word.length;
      }
      const reply = words.join("");
      const dir = mkdtempSync(join(tmpdir(), "parley-bp-"));
      const script = join(dir, "script.json");
      writeFileSync(script, JSON.stringify(["warm-up reply", reply]));

      const agent = spawnLean(["--model-script", script]);
      running.push({ kill: () => agent.child.kill("SIGKILL") });
      const pid = agent.child.pid as number;
      agent.send({ type: "set_auto_compaction", enabled: false, id: "c" });
      await agent.next((r) => r.type === "response" && r["id"] === "c");
      // Warm up: the first prompt loads the agent loop and the model code.
      agent.send({ type: "prompt", message: "first", id: "p1" });
      await agent.next((r) => r.type === "agent_settled");
      const idle = memoryKb(pid).rss;

      const deltas: string[] = [];
      agent.onRecord = (r) => {
        if (r.type !== "message_update") return;
        const event = r["assistantMessageEvent"] as Rec;
        if (event.type === "text_delta") deltas.push(String(event["delta"]));
      };
      agent.child.stdout.pause();
      agent.send({ type: "prompt", message: "second", id: "p2" });
      // Output has started (some of it waits in our own stream buffer), then parley goes quiet.
      await poll(() => agent.child.stdout.readableLength > 0, "the first output", 3 * MINUTE);
      await untilIdle(pid);
      const unread = memoryKb(pid);
      expect(unread.hwm - idle, `idle ${idle} kB, peak while unread ${unread.hwm} kB`).toBeLessThan(MAX_GROWTH_KB);
      // Far from done: the reply is still at its source.
      expect(deltas.length).toBeLessThan(words.length / 2);

      const settled = agent.next((r) => r.type === "agent_settled");
      const end = agent.next((r) => r.type === "message_end" && (r["message"] as Rec)["role"] === "assistant");
      agent.child.stdout.resume();
      const messageEnd = await end;
      await settled;
      expect(deltas.length).toBe(chunkText(reply).length);
      expect(deltas).toEqual(chunkText(reply));
      expect(deltas.join("")).toBe(reply);
      expect(((messageEnd["message"] as Rec)["content"] as Rec[])[0]?.["text"]).toBe(reply);
      agent.child.stdin.end();
    },
    10 * MINUTE,
  );

  it(
    "a bash command's 150 MB of output waits in its pipe: RSS stays near idle, then every byte arrives in order",
    async () => {
      const LINE = "0123456789abcdefghij\n";
      const TOTAL = 150_000_000;
      const agent = spawnLean([]);
      running.push({ kill: () => agent.child.kill("SIGKILL") });
      const pid = agent.child.pid as number;
      agent.send({ type: "bash", command: "true", id: "warm" });
      await agent.next((r) => r.type === "response" && r["id"] === "warm");
      const idle = memoryKb(pid).rss;

      let received = 0;
      let mismatchAt = -1;
      agent.onRecord = (r) => {
        if (r.type !== "bash_execution_update") return;
        const delta = String(r["delta"]);
        // Checked as it comes, against where it must fall in the output.
        for (let i = 0; i < delta.length && mismatchAt === -1; i++) {
          if (delta.charCodeAt(i) !== LINE.charCodeAt((received + i) % LINE.length)) mismatchAt = received + i;
        }
        received += delta.length;
      };
      agent.child.stdout.pause();
      agent.send({ type: "bash", command: `yes ${LINE.trim()} | head -c ${TOTAL}`, id: "big" });
      await poll(() => agent.child.stdout.readableLength > 0, "the first output", 3 * MINUTE);
      await untilIdle(pid);
      const unread = memoryKb(pid);
      expect(unread.hwm - idle, `idle ${idle} kB, peak while unread ${unread.hwm} kB`).toBeLessThan(MAX_GROWTH_KB);
      expect(received).toBeLessThan(TOTAL / 2);

      const response = agent.next((r) => r.type === "response" && r["id"] === "big");
      agent.child.stdout.resume();
      const answer = await response;
      expect(answer["success"]).toBe(true);
      expect((answer["data"] as Rec)["exitCode"]).toBe(0);
      expect(mismatchAt).toBe(-1);
      expect(received).toBe(TOTAL);
      agent.child.stdin.end();
    },
    10 * MINUTE,
  );

  it(
    "an extension's flood of statuses, widgets, titles, editor text and notifications stays bounded; the client ends up showing the same",
    async () => {
      // Memory here is not the records (the first 16 MiB wait as bytes, the rest are merged) but
      // the garbage the extension's loop and the records make, which V8 collects at its own pace,
      // up to a plateau. So the check is that a flood five times as long costs less than the records
      // it adds would (~800 bytes a round, 130 MB for 160,000 rounds), within a fixed budget.
      const SHORT = 40_000;
      const N = 200_000;
      // The young generation is pinned to 16 MiB semi-spaces (Node 20's ceiling): Node 22+ size
      // it from the machine's memory (here up to 64 MiB each, ~130 MB more at the plateau), which
      // is V8's choice of speed over memory, the same for pi, and not what this test measures.
      const agent: AgentProcess = spawnParley(["-e", join(import.meta.dirname, "fixtures/ui-flood.ts")], {
        env: { NODE_OPTIONS: "--max-semi-space-size=16" },
      });
      running.push(agent);
      const pid = agent.child.pid as number;
      await agent.request({ type: "get_state" }, MINUTE);
      const idle = memoryKb(pid).rss;

      const floodUnread = async (n: number, id: string): Promise<number> => {
        const from = agent.records.length;
        agent.child.stdout.pause();
        agent.send({ type: "prompt", message: `/flood ${n}`, id });
        await poll(() => agent.child.stdout.readableLength > 0, "the first output", 3 * MINUTE);
        await untilIdle(pid);
        const peak = memoryKb(pid).hwm;
        agent.child.stdout.resume();
        // Scanned once each (many records arrive: the first 16 MiB wait exactly as sent).
        let scanned = from;
        let done = 0;
        await agent.until(() => {
          for (; scanned < agent.records.length; scanned++) {
            const r = agent.records[scanned] as Rec;
            if ((r["method"] === "notify" && r["message"] === "flood done") || (r.type === "response" && r["id"] === id)) done++;
          }
          return done === 2;
        }, 3 * MINUTE);
        return peak;
      };
      const short = await floodUnread(SHORT, "short");
      const from = agent.records.length;
      const long = await floodUnread(N, "flood");
      expect(long - short, `idle ${idle} kB, peak after ${SHORT} rounds ${short} kB, after ${N} more ${long} kB`).toBeLessThan(100 * 1024);
      expect(long - idle, `idle ${idle} kB, peak ${long} kB`).toBeLessThan(160 * 1024);
      const records = agent.records.slice(from);

      // The UI state the client ends with is what the unthrottled sequence would leave.
      const state = new Map<string, unknown>();
      for (const r of records) {
        const key = replacementKey(r);
        if (key !== undefined) state.set(key, { ...r, id: undefined });
      }
      const last = N - 1;
      const ui = (fields: Record<string, unknown>): Rec => ({ ...fields, type: "extension_ui_request", id: undefined });
      expect(state).toEqual(
        new Map<string, unknown>([
          [replacementKey(ui({ method: "setStatus", statusKey: "a" })) as string, ui({ method: "setStatus", statusKey: "a", statusText: `a${last}` })],
          [replacementKey(ui({ method: "setStatus", statusKey: "b" })) as string, ui({ method: "setStatus", statusKey: "b" })],
          [
            replacementKey(ui({ method: "setWidget", widgetKey: "w", widgetPlacement: "aboveEditor" })) as string,
            ui({ method: "setWidget", widgetKey: "w", widgetLines: [`w${last - 1}`, "second line"], widgetPlacement: "aboveEditor" }),
          ],
          [
            replacementKey(ui({ method: "setWidget", widgetKey: "w", widgetPlacement: "belowEditor" })) as string,
            ui({ method: "setWidget", widgetKey: "w", widgetLines: [`w${last}`, "second line"], widgetPlacement: "belowEditor" }),
          ],
          ["title", ui({ method: "setTitle", title: `t${last}` })],
          ["editor_text", ui({ method: "set_editor_text", text: `e${last}` })],
        ]),
      );
      // The latest values arrive in the order they were set: the widget below the editor is the last word.
      const widgets = records.filter((r) => r["method"] === "setWidget");
      expect(widgets.at(-1)?.["widgetPlacement"]).toBe("belowEditor");
      // Notifications: the newest ones arrive, in order; the oldest beyond the cap were dropped, said once on stderr.
      const notes = records.filter((r) => r["method"] === "notify").map((r) => String(r["message"]));
      expect(notes.at(-1)).toBe("flood done");
      expect(notes.at(-2)).toBe(`n${last}`);
      const numbers = notes.slice(0, -1).map((m) => Number(m.slice(1)));
      expect(numbers.every((n, i) => i === 0 || n > (numbers[i - 1] as number))).toBe(true);
      expect(notes.length).toBeLessThan(N);
      expect(agent.stderr().match(/notifications are dropped/g)).toHaveLength(1);
      agent.closeInput();
      expect((await agent.exited).code).toBe(0);
    },
    10 * MINUTE,
  );
});
