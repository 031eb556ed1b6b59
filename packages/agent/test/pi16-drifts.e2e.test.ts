/**
 * Small behaviours where parley followed pi 0.73 and pi 1.6.0 now differs, checked through the
 * spawned CLIs side by side: pi 1.6.0 (the `pi-newest` devDependency, on the same Node) and
 * parley, each in RPC mode in its own temp HOME / agent directory, on the scripted model of
 * fixtures/pi16-drifts.ts. Each test asserts what pi 1.6 does and that parley does the same:
 * pi.exec's `maxBuffer`/`truncated` and signal codes; pi.events handler errors as
 * extension_error; AGENTS.override.md; PI_CODING_AGENT / AI_AGENT and the bash tool's session
 * variables; get_last_assistant_text passing over failed replies; "Could not restore model";
 * clone of an unsaved session refused; export_html's path as given; the built-in /llama.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { data, DRIFTS_FIXTURE, DRIFTS_MODEL, driftSides } from "./helpers/drift-sides.js";
import { MINUTE, prompted } from "./helpers/pi-home.js";
import { SIDES as BOTH } from "./helpers/newest-pi.js";
import type { AgentWorld } from "./helpers/offline-agents.js";
import type { AgentProcess, Rec } from "./helpers/spawn.js";

const FIXTURE = DRIFTS_FIXTURE;
/** The scripted model, unless a test chooses otherwise. */
const MODEL = DRIFTS_MODEL;
const { world, start } = driftSides("parley-drifts-");

/** Runs an extension command of the fixture and returns what its notification says (JSON). */
async function notified(agent: AgentProcess, command: string): Promise<unknown> {
  const from = agent.records.length;
  await agent.request({ type: "prompt", message: `/${command}` }, MINUTE);
  const note = await agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "notify", MINUTE, from);
  return JSON.parse(String(note["message"]));
}

/** A response as compared: success and error, or data. */
const outcome = (r: Rec): unknown => (r["success"] === true ? { success: true, data: r["data"] } : { success: false, error: r["error"] });

describe("pi.exec as pi 1.6 runs it", () => {
  it("maxBuffer cuts the output and stops the command (truncated, never a success); a signal's death reports 128+n; a bad cap is a RangeError", async () => {
    const results = await Promise.all(BOTH.map((agent) => notified(start(agent, world(agent), ["-ne", ...MODEL]), "exec-cases")));
    const [pi, parley] = results.map((r) => {
      const all = r as Record<string, { stdout: string; stderr: string } & Record<string, unknown>>;
      // Which pipe's bytes came first is the system's choice: only the total and the pieces are compared.
      const both = all["cappedBoth"]!;
      return { ...all, cappedBoth: { ...both, stdout: undefined, stderr: undefined, kept: both.stdout.length + both.stderr.length } };
    });
    expect(parley).toEqual(pi);
    expect(parley).toMatchObject({
      capped: { stdout: "0123", stderr: "", code: 143, killed: true, truncated: true },
      cappedBoth: { kept: 5, code: 143, killed: true, truncated: true },
      within: { stdout: "hello", stderr: "oops", code: 3, killed: false, truncated: false },
      killed9: { code: 137, killed: false, truncated: false },
      killed15: { code: 143, killed: false, truncated: false },
      timeout: { code: 143, killed: true, truncated: false },
      utf8: { stdout: "a", truncated: true },
      missing: { code: 1, killed: false, truncated: false, hasStderr: true },
    });
    expect(String((parley as Record<string, unknown>)["negative"])).toMatch(/^RangeError: maxBuffer must be an integer between 0 and \d+ bytes$/);
  });
});

describe("pi.events as pi 1.6 runs it", () => {
  it("a handler that throws or rejects is reported as extension_error (event `events:<channel>`); the other handlers still hear the event", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const p = start(agent, world(agent), ["-ne", ...MODEL]);
        const from = p.records.length;
        const heard = await notified(p, "events-throw");
        const errors = p.records
          .slice(from)
          .filter((r) => r.type === "extension_error")
          .map((r) => ({ event: r["event"], error: r["error"], extensionPath: r["extensionPath"] }));
        return { heard, errors };
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[1]).toEqual({
      heard: { heard: 1 },
      errors: [
        { event: "events:drifts:sync", error: "sync handler failed", extensionPath: FIXTURE },
        { event: "events:drifts:async", error: "async handler failed", extensionPath: FIXTURE },
      ],
    });
  });
});

describe("context files as pi 1.6 reads them", () => {
  it("AGENTS.override.md stands in for AGENTS.md and CLAUDE.md of its own folder only; a folder of that name is passed over", async () => {
    const markers = await Promise.all(
      BOTH.map(async (agent) => {
        const w = world(agent);
        const sub = join(w.cwd, "sub");
        mkdirSync(join(w.cwd, "AGENTS.override.md"), { recursive: true });
        mkdirSync(sub, { recursive: true });
        writeFileSync(join(w.agentDir, "AGENTS.md"), "context-marker-global\n");
        writeFileSync(join(w.cwd, "AGENTS.md"), "context-marker-parent-agents\n");
        writeFileSync(join(sub, "AGENTS.md"), "context-marker-sub-agents\n");
        writeFileSync(join(sub, "CLAUDE.md"), "context-marker-sub-claude\n");
        writeFileSync(join(sub, "AGENTS.override.md"), "context-marker-sub-override\n");
        return notified(start(agent, { ...w, cwd: sub }, ["--no-session", "-ne", ...MODEL]), "context-markers");
      }),
    );
    expect(markers[1]).toEqual(markers[0]);
    expect(markers[1]).toEqual(["context-marker-global", "context-marker-parent-agents", "context-marker-sub-override"]);
  });
});

describe("the environment pi 1.6 sets", () => {
  it("PI_CODING_AGENT=true and AI_AGENT=pi for extensions and their children", async () => {
    const envs = await Promise.all(BOTH.map((agent) => notified(start(agent, world(agent), ["--no-session", "-ne", ...MODEL]), "env")));
    expect(envs[1]).toEqual(envs[0]);
    expect(envs[1]).toEqual({ PI_CODING_AGENT: "true", AI_AGENT: "pi", child: "true|pi" });
  });

  /** The PI_* / AI_AGENT variables a bash tool call saw (the scripted reply is the tool's output). */
  async function bashEnv(agent: AgentProcess): Promise<Record<string, string>> {
    await prompted(agent, "show env");
    const text = String(data(await agent.request({ type: "get_last_assistant_text" }, MINUTE))["text"]);
    return Object.fromEntries(text.split("\n").map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
  }

  it("the bash tool's commands get the session's PI_SESSION_ID, PI_SESSION_FILE, PI_PROVIDER, PI_MODEL and PI_REASONING_LEVEL", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const p = start(agent, world(agent), ["-ne", ...MODEL, "--thinking", "low"], { PI_SESSION_ID: "inherited", PI_SESSION_FILE: "inherited" });
        const env = await bashEnv(p);
        const state = data(await p.request({ type: "get_state" }, MINUTE));
        expect(env["PI_SESSION_ID"]).toBe(state["sessionId"]);
        expect(env["PI_SESSION_FILE"]).toBe(state["sessionFile"]);
        const { PI_SESSION_ID: _id, PI_SESSION_FILE: _file, PI_CODING_AGENT_DIR: _dir, PI_SKIP_VERSION_CHECK: _check, ...rest } = env;
        return rest;
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[1]).toEqual({
      AI_AGENT: "pi",
      PI_CODING_AGENT: "true",
      PI_OFFLINE: "1",
      PI_PROVIDER: "drifts",
      PI_MODEL: "scripted",
      PI_REASONING_LEVEL: "low",
    });
  });

  it("an in-memory session has no PI_SESSION_FILE, even one the agent inherited", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const env = await bashEnv(start(agent, world(agent), ["--no-session", "-ne", ...MODEL], { PI_SESSION_FILE: "inherited" }));
        return { file: env["PI_SESSION_FILE"], hasId: (env["PI_SESSION_ID"] ?? "").length > 0 };
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[1]).toEqual({ file: undefined, hasId: true });
  });
});

describe("RPC commands as pi 1.6 answers them", () => {
  it("get_last_assistant_text passes over a failed reply without text, not one with text", async () => {
    const texts = await Promise.all(
      BOTH.map(async (agent) => {
        const p = start(agent, world(agent), ["--no-session", "-ne", ...MODEL]);
        const last = async () => data(await p.request({ type: "get_last_assistant_text" }, MINUTE));
        const seen: unknown[] = [await last()];
        await prompted(p, "Reply with just: first");
        seen.push(await last());
        await prompted(p, "fail quietly");
        seen.push(await last());
        await prompted(p, "fail with words");
        seen.push(await last());
        return seen;
      }),
    );
    expect(texts[1]).toEqual(texts[0]);
    expect(texts[1]).toEqual([{}, { text: "first" }, { text: "first" }, { text: "partial words" }]);
  });

  it("clone of a session not saved yet is refused in pi's words; a saved one and an in-memory one clone", async () => {
    const answers = await Promise.all(
      BOTH.map(async (agent) => {
        const p = start(agent, world(agent), ["-ne", ...MODEL]);
        const ask = async (command: object) => outcome(await p.request(command, MINUTE));
        const fresh = await ask({ type: "clone" });
        await prompted(p, "Reply with just: one");
        const saved = await ask({ type: "clone" });
        const memory = start(agent, world(agent), ["--no-session", "-ne", ...MODEL]);
        const inMemory = outcome(await memory.request({ type: "clone" }, MINUTE));
        return { fresh, saved, inMemory };
      }),
    );
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[1]).toEqual({
      fresh: { success: false, error: "This session has not been saved yet. Send a message before cloning or forking it." },
      saved: { success: true, data: { cancelled: false } },
      inMemory: { success: true, data: { cancelled: false } },
    });
  });

  it("export_html answers the path as given: without one, pi's file name alone, written in the working folder", async () => {
    const answers = await Promise.all(
      BOTH.map(async (agent) => {
        const w = world(agent);
        const p = start(agent, w, ["-ne", ...MODEL]);
        await prompted(p, "Reply with just: one");
        const file = String(data(await p.request({ type: "get_state" }, MINUTE))["sessionFile"]);
        const plain = String(data(await p.request({ type: "export_html" }, MINUTE))["path"]);
        const named = String(data(await p.request({ type: "export_html", outputPath: "named.html" }, MINUTE))["path"]);
        expect(existsSync(join(w.cwd, plain))).toBe(true);
        expect(existsSync(join(w.cwd, "named.html"))).toBe(true);
        return { plain: plain === `pi-session-${basename(file, ".jsonl")}.html` ? "pi-session-<session>.html" : plain, named };
      }),
    );
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[1]).toEqual({ plain: "pi-session-<session>.html", named: "named.html" });
  });

  it("export_html refuses an in-memory session and one not written yet in pi's words, and fails on a missing folder", async () => {
    const answers = await Promise.all(
      BOTH.map(async (agent) => {
        const memory = start(agent, world(agent), ["--no-session", "-ne", ...MODEL]);
        await prompted(memory, "Reply with just: one");
        const inMemory = outcome(await memory.request({ type: "export_html" }, MINUTE));
        const w = world(agent);
        const p = start(agent, w, ["-ne", ...MODEL]);
        const unwritten = outcome(await p.request({ type: "export_html" }, MINUTE));
        await prompted(p, "Reply with just: one");
        const noFolder = outcome(await p.request({ type: "export_html", outputPath: "missing/page.html" }, MINUTE));
        return { inMemory, unwritten, noFolder, folderMade: existsSync(join(w.cwd, "missing")) };
      }),
    );
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[1]).toEqual({
      inMemory: { success: false, error: "Cannot export in-memory session to HTML" },
      unwritten: { success: false, error: "Nothing to export yet - start a conversation first" },
      noFolder: { success: false, error: "ENOENT: no such file or directory, open 'missing/page.html'" },
      folderMade: false,
    });
  });

  it("the built-in /llama: listed as pi lists it, and without a terminal it only says so", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const p = start(agent, world(agent), ["--no-session", ...MODEL]);
        const commands = data(await p.request({ type: "get_commands" }, MINUTE))["commands"] as Record<string, unknown>[];
        const llama = commands.find((c) => c["name"] === "llama");
        const from = p.records.length;
        const response = await p.request({ type: "prompt", message: "/llama load x" }, MINUTE);
        const note = await p.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "notify", MINUTE, from);
        const sourceInfo = llama?.["sourceInfo"] as Record<string, unknown> | undefined;
        return {
          llama: {
            name: llama?.["name"],
            description: llama?.["description"],
            source: llama?.["source"],
            path: sourceInfo?.["path"],
            from: sourceInfo?.["source"],
          },
          response: data(response),
          note: { message: note["message"], notifyType: note["notifyType"] },
        };
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[1]).toEqual({
      llama: { name: "llama", description: "Manage llama.cpp router models", source: "extension", path: "builtin:llama.cpp", from: "builtin" },
      response: { disposition: "handled" },
      note: { message: "/llama is available in interactive mode", notifyType: "warning" },
    });
  });
});

describe("a resumed session whose model is gone", () => {
  /** A stored session last answered by gone/vanished, in pi's format. */
  function goneSession(w: AgentWorld): string {
    const file = join(w.base, "gone.jsonl");
    const lines = [
      { type: "session", version: 3, id: "01a251fe-0000-7000-8000-000000000001", timestamp: "2026-12-07T19:00:00.000Z", cwd: w.cwd },
      { type: "model_change", id: "aaaa0001", parentId: null, timestamp: "2026-12-07T19:00:00.001Z", provider: "gone", modelId: "vanished" },
      { type: "thinking_level_change", id: "aaaa0002", parentId: "aaaa0001", timestamp: "2026-12-07T19:00:00.002Z", thinkingLevel: "low" },
      {
        type: "message",
        id: "aaaa0003",
        parentId: "aaaa0002",
        timestamp: "2026-12-07T19:00:00.003Z",
        message: { role: "user", content: [{ type: "text", text: "hello" }], timestamp: 1796670000003 },
      },
      {
        type: "message",
        id: "aaaa0004",
        parentId: "aaaa0003",
        timestamp: "2026-12-07T19:00:00.004Z",
        message: {
          role: "assistant",
          content: [{ type: "text", text: "hi there" }],
          api: "openai-completions",
          provider: "gone",
          model: "vanished",
          usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
          stopReason: "stop",
          timestamp: 1796670000004,
        },
      },
    ];
    writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    // The default model both fall back to, from the fixture.
    writeFileSync(join(w.agentDir, "settings.json"), JSON.stringify({ defaultProvider: "drifts", defaultModel: "scripted" }));
    return file;
  }

  // pi prints it as a diagnostic, `Warning: …`, and parley in the same words.
  const LINE = "Warning: Could not restore model gone/vanished. Using drifts/scripted";

  it('says "Could not restore model …" on stderr at start-up and after a switch to it, and continues on the default model', async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const resumed = world(agent);
        const atStart = start(agent, resumed, ["--session", goneSession(resumed), "-ne"]);
        const model = data(await atStart.request({ type: "get_state" }, MINUTE))["model"] as Record<string, unknown>;
        await atStart.until(() => atStart.stderr().includes(LINE));
        const switched = world(agent);
        const later = start(agent, switched, ["-ne"]);
        const answer = outcome(await later.request({ type: "switch_session", sessionPath: goneSession(switched) }, MINUTE));
        await later.until(() => later.stderr().includes(LINE));
        return {
          model: `${model["provider"]}/${model["id"]}`,
          answer,
          times: atStart
            .stderr()
            .split("\n")
            .filter((l) => l === LINE).length,
        };
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[1]).toEqual({ model: "drifts/scripted", answer: { success: true, data: { cancelled: false } }, times: 1 });
  });
});

describe("get_commands' built-ins as pi 1.6 lists them", () => {
  it("/llama and /mcp: pi's descriptions, each built-in's scope temporary, brought by settings or by -e builtin:…", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const listed = async (args: string[]) => {
          const p = start(agent, world(agent), ["--no-session", ...MODEL, ...args]);
          const commands = data(await p.request({ type: "get_commands" }, MINUTE))["commands"] as Record<string, unknown>[];
          return commands.filter((c) => c["name"] === "llama" || c["name"] === "mcp");
        };
        return { bySettings: await listed([]), requested: await listed(["-ne", "-e", "builtin:mcp"]) };
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    const mcp = {
      name: "mcp",
      description: "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure",
      source: "extension",
      sourceInfo: { path: "builtin:mcp", source: "builtin", scope: "temporary", origin: "top-level" },
    };
    expect(seen[1]?.requested).toEqual([mcp]);
    expect(seen[1]?.bySettings).toContainEqual(mcp);
    expect(seen[1]?.bySettings).toContainEqual(expect.objectContaining({ name: "llama", sourceInfo: expect.objectContaining({ scope: "temporary" }) }));
  });
});

describe("compaction_end after a compaction that did not happen", () => {
  /** The compaction_end a `compact` brought, and whether the command succeeded. */
  async function compactEnd(p: AgentProcess, customInstructions?: string): Promise<{ success: unknown; end: Rec; hasResult: boolean }> {
    const from = p.records.length;
    const answer = await p.request({ type: "compact", ...(customInstructions ? { customInstructions } : {}) }, MINUTE);
    const end = await p.waitFor((r) => r.type === "compaction_end", MINUTE, from);
    return { success: answer["success"], end, hasResult: "result" in end };
  }

  it("leaves `result` out (not null) when an extension cancels the compaction (a failure is sent by the same code)", async () => {
    const ends = await Promise.all(
      BOTH.map(async (agent) => {
        // Keeping almost nothing gives the compaction something to cut, so the extension is asked.
        const w = world(agent);
        writeFileSync(join(w.agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 1 } }));
        const p = start(agent, w, ["--no-session", "-ne", ...MODEL]);
        for (const word of ["one", "two", "three"]) await prompted(p, `Reply with just: ${word}`);
        const cancelled = await compactEnd(p, "cancel");
        return { cancelled };
      }),
    );
    expect(ends[1]).toEqual(ends[0]);
    expect(ends[1]).toEqual({
      cancelled: { success: false, end: { type: "compaction_end", reason: "manual", aborted: true, willRetry: false }, hasResult: false },
    });
  });
});

describe("offline mode as pi 1.6 sets it", () => {
  it("--offline or PI_OFFLINE (1/true/yes) sets PI_OFFLINE=1 and PI_SKIP_VERSION_CHECK=1 for extensions and children; otherwise neither is set", async () => {
    const cases: [string, string[], NodeJS.ProcessEnv][] = [
      ["flag", ["--offline"], { PI_OFFLINE: undefined, PI_SKIP_VERSION_CHECK: undefined }],
      ["env TRUE", [], { PI_OFFLINE: "TRUE", PI_SKIP_VERSION_CHECK: undefined }],
      ["env yes", [], { PI_OFFLINE: "yes", PI_SKIP_VERSION_CHECK: undefined }],
      ["env 0", [], { PI_OFFLINE: "0", PI_SKIP_VERSION_CHECK: undefined }],
      ["neither", [], { PI_OFFLINE: undefined, PI_SKIP_VERSION_CHECK: undefined }],
    ];
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const out: Record<string, unknown> = {};
        for (const [name, args, env] of cases)
          out[name] = await notified(start(agent, world(agent), ["--no-session", "-ne", ...MODEL, ...args], env), "offline-env");
        return out;
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    const on = { PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", child: "1|1" };
    expect(seen[1]).toEqual({
      flag: on,
      "env TRUE": on,
      "env yes": on,
      "env 0": { PI_OFFLINE: "0", child: "0|unset" },
      neither: { child: "unset|unset" },
    });
  });
});
