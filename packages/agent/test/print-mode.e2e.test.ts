/**
 * pi's one-shot modes, `-p` / `--print` and `--mode json`, run side by side on pi 1.6.0 (the
 * `pi-newest` devDependency, on the same Node) and parley, through the spawned CLIs, on the
 * offline model (fixtures/offline-provider.ts) and fixtures/print-mode.ts (dialogs, a failing
 * provider, an extension command). Each agent gets its own HOME and agent directory; neither
 * writes a session (--no-session). Compared: stdout, the exit status and the kind of stderr
 * (silent or not, and what it names); in JSON mode the header and the sequence of events, every
 * parley event checked against the published schema.
 * Also parley's own: a misspelt flag, `--mode rpc` fed a one-shot question, `--help`.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AGENT_CEILING_MS, deadline } from "./helpers/deadline.js";
import { makeImage } from "./helpers/images.js";
import { agentWorld, OFFLINE_PROVIDER, type AgentWorld } from "./helpers/offline-agents.js";
import { outboundViolation } from "./helpers/outbound-schema.js";
import { type Side as Agent, sideBySide, sideCommand } from "./helpers/newest-pi.js";
import { NO_KEYS } from "./helpers/pi-home.js";
import { ROOT } from "./helpers/spawn.js";

const FIXTURE = join(ROOT, "packages/agent/test/fixtures/print-mode.ts");

const worlds: AgentWorld[] = [];
/** Files both agents read (@file arguments): outside either agent's world, the same absolute path for both. */
const shared = mkdtempSync(join(tmpdir(), "parley-print-shared-"));
afterAll(() => {
  for (const w of worlds) rmSync(w.base, { recursive: true, force: true });
  rmSync(shared, { recursive: true, force: true });
});

interface Run {
  stdout: string;
  stderr: string;
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The offline model and the print-mode fixture, no other extension. */
const BASE_ARGS = ["--no-session", "-ne", "-e", OFFLINE_PROVIDER, "-e", FIXTURE, "--provider", "offline", "--model", "echo"];

interface RunOptions {
  stdin?: string;
  world?: AgentWorld;
  base?: string[];
  /** Called with stdout so far at each chunk (a test that signals the agent mid-run). */
  watch?: (stdout: string, child: ReturnType<typeof spawn>) => void;
}

function run(agent: Agent, args: string[], options: RunOptions = {}): Promise<Run> {
  const world = options.world ?? agentWorld(`parley-print-${agent}-`);
  if (!options.world) worlds.push(world);
  const [bin, ...pre] = sideCommand(agent);
  const child = spawn(bin, [...pre, ...(options.base ?? BASE_ARGS), ...args], {
    cwd: world.cwd,
    env: { ...process.env, ...NO_KEYS, ...world.env, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", NO_COLOR: "1" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
    options.watch?.(stdout, child);
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdin.end(options.stdin ?? "");
  const ceiling = setTimeout(() => child.kill("SIGKILL"), deadline(3 * AGENT_CEILING_MS));
  return new Promise((resolve) =>
    child.on("close", (code, signal) => {
      clearTimeout(ceiling);
      resolve({ stdout, stderr, code, signal });
    }),
  );
}

/** Both agents, the same arguments, at once. */
const both = (args: string[], options: Omit<RunOptions, "world"> = {}): Promise<Record<Agent, Run>> => sideBySide((agent) => run(agent, args, options));

const lines = (stdout: string): Record<string, unknown>[] =>
  stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** An event as the comparison sees it: its type, the message's role, the streaming event's type. */
function signature(event: Record<string, unknown>): string {
  const message = event["message"] as { role?: string } | undefined;
  const update = event["assistantMessageEvent"] as { type?: string } | undefined;
  return [event["type"], message?.role, update?.type].filter((part) => part !== undefined).join(":");
}

/** A 2×2 24-bit Windows bitmap (rows bottom-up, each padded to 4 bytes). */
function bitmap2x2(): Buffer {
  const pixels = Buffer.from([0, 0, 255, 0, 255, 0, 0, 0, 255, 0, 0, 255, 255, 255, 0, 0]);
  const header = Buffer.alloc(54);
  header.write("BM", 0, "latin1");
  header.writeUInt32LE(54 + pixels.length, 2);
  header.writeUInt32LE(54, 10);
  header.writeUInt32LE(40, 14);
  header.writeInt32LE(2, 18);
  header.writeInt32LE(2, 22);
  header.writeUInt16LE(1, 26);
  header.writeUInt16LE(24, 28);
  header.writeUInt32LE(pixels.length, 34);
  return Buffer.concat([header, pixels]);
}

/** Each test runs both agents, several at once on a shared machine: a ceiling against a hang, not a speed. */
const LONG = { timeout: deadline(10 * AGENT_CEILING_MS) };

const userMessages = (events: Record<string, unknown>[]) =>
  events.filter((e) => e["type"] === "message_end" && (e["message"] as { role: string }).role === "user").map((e) => e["message"] as { content: unknown });

describe.concurrent("print mode (-p) against pi 1.6.0", () => {
  it("a plain prompt: the reply's text on stdout, exit 0, nothing on stderr", LONG, async () => {
    const r = await both(["-p", "Reply with just: hello"]);
    expect(r.pi.stdout).toBe("hello\n");
    expect(r.parley.stdout).toBe(r.pi.stdout);
    expect([r.pi.code, r.parley.code]).toEqual([0, 0]);
    expect(r.parley.stderr).toBe("");
  });

  it("piped stdin comes first in the first prompt, joined to the message with nothing between", LONG, async () => {
    const glued = await both(["-p", "glued"], { stdin: "  Reply with just:\n" });
    expect(glued.pi.stdout).toBe("glued\n");
    expect(glued.parley.stdout).toBe(glued.pi.stdout);
    expect([glued.pi.code, glued.parley.code]).toEqual([0, 0]);
  });

  it("without -p or --mode, piped stdin means print mode, as pi chooses it", LONG, async () => {
    const piped = await both([], { stdin: "Reply with just: piped\n" });
    expect(piped.pi.stdout).toBe("piped\n");
    expect(piped.parley.stdout).toBe(piped.pi.stdout);
    expect([piped.pi.code, piped.parley.code]).toEqual([0, 0]);
  });

  it("several messages run one after another; only the last reply is printed", LONG, async () => {
    const several = await both(["-p", "Reply with just: one", "Reply with just: two"]);
    expect(several.pi.stdout).toBe("two\n");
    expect(several.parley.stdout).toBe(several.pi.stdout);
    expect([several.pi.code, several.parley.code]).toEqual([0, 0]);
  });

  it("@file: a text file's content goes into the prompt; a missing file stops with exit 1 before any prompt", LONG, async () => {
    const file = join(shared, "question.txt");
    writeFileSync(file, "\uFEFFReply with just: from-file");
    const r = await both(["-p", `@${file}`]);
    expect(r.pi.stdout).toBe("from-file\n");
    expect(r.parley.stdout).toBe(r.pi.stdout);
    const missing = await both(["-p", "@does-not-exist.txt", "Reply with just: never"]);
    expect([missing.pi.code, missing.parley.code]).toEqual([1, 1]);
    expect([missing.pi.stdout, missing.parley.stdout]).toEqual(["", ""]);
    for (const m of [missing.pi, missing.parley]) expect(m.stderr).toMatch(/File not found: .*does-not-exist\.txt/);
  });

  it("@file in JSON mode: the user message holds the file's text and an image as pi builds them", LONG, async () => {
    const text = join(shared, "notes.md");
    writeFileSync(text, "line one\nline two\n");
    const image = join(shared, "pixel.png");
    writeFileSync(image, makeImage(4, 3, "png"));
    // A BMP, which pi converts to PNG and says so.
    const bmp = join(shared, "dot.bmp");
    writeFileSync(bmp, bitmap2x2());
    const r = await both(["--mode", "json", `@${text}`, `@${image}`, `@${bmp}`, "Reply with just: seen"]);
    expect([r.pi.code, r.parley.code]).toEqual([0, 0]);
    const [piUser, parleyUser] = [userMessages(lines(r.pi.stdout)), userMessages(lines(r.parley.stdout))];
    expect(piUser).toHaveLength(1);
    expect(JSON.stringify(piUser)).toContain("[Image converted from image/bmp to image/png.]");
    expect(parleyUser.map((m) => m.content)).toEqual(piUser.map((m) => m.content));
  });

  it("extensions load with no UI: ctx.hasUI false, ctx.mode print/json, dialogs answer nothing at once, as pi's", LONG, async () => {
    for (const mode of [["-p"], ["--mode", "json"]]) {
      const reports = Object.fromEntries(
        await Promise.all(
          (["pi", "parley"] as const).map(async (agent) => {
            const world = agentWorld(`parley-print-${agent}-`);
            worlds.push(world);
            const report = join(world.base, "report.json");
            const r = await run(agent, [...mode, "--report", report, "Reply with just: after-dialogs"], { world });
            expect(r.code, `${agent}: ${r.stderr}`).toBe(0);
            return [agent, JSON.parse(readFileSync(report, "utf8")) as Record<string, unknown>] as const;
          }),
        ),
      );
      expect(reports["parley"]).toEqual(reports["pi"]);
      expect(reports["pi"]).toMatchObject({ hasUI: false, select: null, confirm: false, input: null, editor: null, announced: 0 });
    }
  });

  it("a provider error: nothing on stdout, the error on stderr, exit 1 (JSON mode: the error is an event, exit 0)", LONG, async () => {
    const base = ["--no-session", "-ne", "-e", OFFLINE_PROVIDER, "-e", FIXTURE, "--provider", "failing", "--model", "broken"];
    const r = await both(["-p", "hello"], { base });
    expect([r.pi.code, r.parley.code]).toEqual([1, 1]);
    expect([r.pi.stdout, r.parley.stdout]).toEqual(["", ""]);
    for (const x of [r.pi, r.parley]) expect(x.stderr).toContain("the test provider failed");
    const json = await both(["--mode", "json", "hello"], { base });
    expect([json.pi.code, json.parley.code]).toEqual([0, 0]);
    for (const x of [json.pi, json.parley]) {
      const end = lines(x.stdout).find((e) => e["type"] === "message_end" && (e["message"] as { role: string }).role === "assistant");
      expect(end?.["message"]).toMatchObject({ stopReason: "error", errorMessage: "the test provider failed" });
    }
  });

  it("a reply cut off at the output limit: its text printed, a warning, exit 1 (pi's print-mode rule)", LONG, async () => {
    // parley alone: pi 1.6.0's loop drops such a reply before print mode sees it (a context_edit
    // entry, then agent_settled), so pi prints nothing and exits 0, unlike its print mode's own rule.
    const base = ["--no-session", "-ne", "-e", OFFLINE_PROVIDER, "-e", FIXTURE, "--provider", "failing", "--model", "cut"];
    const r = await run("parley", ["-p", "hello"], { base });
    expect([r.stdout, r.code]).toEqual(["cut short here\n", 1]);
    expect(r.stderr).toContain("Response was truncated");
  });

  it("a run an extension aborts: nothing on stdout, the error on stderr, exit 1, as pi", LONG, async () => {
    const r = await both(["--abort-run", "-p", "sleep"]);
    expect([r.pi.stdout, r.parley.stdout]).toEqual(["", ""]);
    expect([r.pi.code, r.parley.code]).toEqual([1, 1]);
    for (const x of [r.pi, r.parley]) expect(x.stderr).toMatch(/abort/i);
  });

  it("an extension command as the prompt runs until its handler returns; a turn it starts is not waited for, as in pi", LONG, async () => {
    const r = await both(["-p", "/say-hi"]);
    expect([r.pi.code, r.parley.code]).toEqual([0, 0]);
    expect(r.pi.stdout).toBe("");
    expect(r.parley.stdout).toBe(r.pi.stdout);
  });

  it("an extension command's ctx.reload() reloads in print mode, as in pi (the CLI hands every mode's front door to reload)", LONG, async () => {
    const r = await both(["-p", "/reload-now"]);
    expect([r.pi.code, r.parley.code]).toEqual([0, 0]);
    for (const x of [r.pi, r.parley]) expect(x.stderr).toContain("reload returned");
    expect(r.parley.stderr).not.toMatch(/before start-up ended/);
  });
});

describe.concurrent("sessions in print mode, against pi 1.6.0", () => {
  it("without --no-session the run is saved where pi saves it, and -c continues it", LONG, async () => {
    const base = ["-ne", "-e", OFFLINE_PROVIDER, "--provider", "offline", "--model", "echo"];
    const saved = await Promise.all(
      (["pi", "parley"] as const).map(async (agent) => {
        const world = agentWorld(`parley-print-${agent}-`);
        worlds.push(world);
        const first = await run(agent, ["-p", "Reply with just: first"], { world, base });
        const again = await run(agent, ["-c", "-p", "Reply with just: again"], { world, base });
        expect([first.stdout, again.stdout, first.code, again.code], `${agent}: ${first.stderr}${again.stderr}`).toEqual(["first\n", "again\n", 0, 0]);
        const sessions = join(world.agentDir, "sessions");
        const files = readdirSync(sessions, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".jsonl"));
        expect(files).toHaveLength(1);
        const entries = readFileSync(join(sessions, files[0]!), "utf8")
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l) as { type: string; message?: { role: string } });
        // System message entries included: parley records them as pi 1.6 does.
        // The project's folder named as pi names it (its path with dashes), the world's own part left out.
        const folder = dirname(files[0]!).replace(world.base.replace(/^\//, "").replace(/\//g, "-"), "BASE");
        return { folder, entries: entries.map((e) => e.message?.role ?? e.type) };
      }),
    );
    expect(saved[1]).toEqual(saved[0]);
    // The first run recorded the system prompt; -c's run, with the same prompt, recorded none.
    expect(saved[0]?.entries.filter((e) => e === "system")).toHaveLength(1);
  });
});

describe.concurrent("JSON mode (--mode json) against pi 1.6.0", () => {
  it("the session header, then the same events in the same order; every parley event fits the published schema", LONG, async () => {
    const r = await both(["--mode", "json", "Reply with just: one", "use the bash tool"]);
    expect([r.pi.code, r.parley.code]).toEqual([0, 0]);
    const [pi, parley] = [lines(r.pi.stdout), lines(r.parley.stdout)];
    const [piHeader, parleyHeader] = [pi[0]!, parley[0]!];
    expect(piHeader["type"]).toBe("session");
    expect(Object.keys(parleyHeader).sort()).toEqual(Object.keys(piHeader).sort());
    expect(parleyHeader).toMatchObject({ type: "session", version: piHeader["version"], cwd: expect.stringContaining("proj") });
    // Every event, the recorded system message's message_start/message_end included (as pi 1.6 sends them).
    const compared = (events: Record<string, unknown>[]) => events.slice(1).map(signature);
    expect(compared(parley)).toEqual(compared(pi));
    expect(compared(pi).filter((s) => s.endsWith(":system"))).toHaveLength(2);
    for (const event of parley.slice(1)) expect(outboundViolation(event)).toBeUndefined();
    // The tool ran in both, with the same content (pi 1.6.0's bash result also has `structuredContent`).
    const toolEnd = (events: Record<string, unknown>[]) =>
      events.find((e) => e["type"] === "tool_execution_end") as { result: { content: unknown } } | undefined;
    expect(toolEnd(parley)).toMatchObject({ toolName: "bash", isError: false, result: { content: toolEnd(pi)?.result.content } });
  });
});

describe.concurrent("how a one-shot run ends on a signal, against pi 1.6.0", () => {
  it("SIGTERM while a tool runs: the run stops, the process exits 143 (JSON mode shows what ran)", LONG, async () => {
    const signalled = new Set<unknown>();
    const r = await both(["--mode", "json", "sleep"], {
      watch: (stdout, child) => {
        if (!signalled.has(child) && stdout.includes('"tool_execution_start"')) {
          signalled.add(child);
          child.kill("SIGTERM");
        }
      },
    });
    expect([r.pi.code, r.parley.code]).toEqual([143, 143]);
    for (const x of [r.pi, r.parley]) expect(lines(x.stdout).some((e) => e["type"] === "tool_execution_start")).toBe(true);
  });
});

describe.concurrent("parley's own help for newcomers", () => {
  it("a misspelt flag is named with the flag meant (pi: Unknown option), unless an extension registered it", LONG, async () => {
    const r = await both(["--mdoe", "rpc"], { base: ["--no-session", "-ne", "-e", OFFLINE_PROVIDER] });
    expect([r.pi.code, r.parley.code]).toEqual([1, 1]);
    expect(r.pi.stderr).toContain("Unknown option: --mdoe");
    expect(r.parley.stderr).toContain("unknown option --mdoe (did you mean --mode?)");
    // An extension that registers --mdoe gets it, as in pi.
    const ext = join(shared, "mdoe-flag.ts");
    writeFileSync(
      ext,
      'export default function (pi: any) { pi.registerFlag("mdoe", { type: "string" }); pi.on("input", () => ({ action: "transform", text: `Reply with just: flag-${pi.getFlag("mdoe")}` })); }\n',
    );
    const owned = await both(["--mdoe", "rpc", "-e", ext, "-p", "anything"]);
    expect(owned.pi.stdout).toBe("flag-rpc\n");
    expect(owned.parley.stdout).toBe(owned.pi.stdout);
    expect([owned.pi.code, owned.parley.code]).toEqual([0, 0]);
  });

  it("`--mode rpc` whose input ends while a prompt runs says so on stderr and points to -p; plain text gets the same hint", LONG, async () => {
    const prompt = await run("parley", ["--mode", "rpc"], { stdin: `${JSON.stringify({ type: "prompt", message: "sleep" })}\n` });
    expect(prompt.code).toBe(0);
    expect(prompt.stderr).toContain("input ended while a prompt was running");
    expect(prompt.stderr).toContain('parley -p "question"');
    const plain = await run("parley", ["--mode", "rpc"], { stdin: "what is in this folder?\n" });
    expect(plain.stderr).toContain("a line of plain text is not one");
    expect(plain.stderr).toContain('parley -p "question"');
    // stdout still carries protocol records only: the parse error's response.
    expect(lines(plain.stdout).map((r) => r["type"])).toEqual(["response"]);
  });

  it("--help shows the smallest real-provider example and the one-shot modes", LONG, async () => {
    const help = await run("parley", ["--help"], { base: [] });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/ANTHROPIC_API_KEY=\S+ parley --mode rpc --model \S+/);
    expect(help.stdout).toContain("parley -p");
    expect(help.stdout).toContain("--mode json");
  });
});
