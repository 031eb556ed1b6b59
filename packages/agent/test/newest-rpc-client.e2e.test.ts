/**
 * The newest pi's own client, unchanged, against parley: the `RpcClient` class shipped in
 * @earendil-works/pi-coding-agent 1.6.0 (devDependency alias `pi-newest`; pi 1.6.0 itself needs
 * Node 22, but this file of it is self-contained and runs here). It spawns parley as it spawns pi
 * (`node <cliPath> --mode rpc …`), on the offline model of fixtures/offline-provider.ts.
 *
 * 1. Every public method of the 1.6.0 class is called on parley; each result is checked against
 *    what pi 1.6.0 returns (its rpc-mode.js and rpc-types.d.ts are the reference), and, for the
 *    methods pi 0.73.1 has too, compared with pi 0.73.1 driven through 0.73.1's own RpcClient,
 *    except for what the newest pi changed (listed above `STEPS`). A guard test fails when a
 *    public method of the 1.6.0 class was not called.
 * 2. The client's own spawn path: its `cliPath`, `cwd`, `env`, `provider`/`model` and `args`
 *    options start parley with that meaning.
 * 3. The scenarios of the newest pi's RPC test file (packages/coding-agent/test/rpc.test.ts in
 *    earendil-works/pi), in our own words, driven through the 1.6.0 client as that file drives it:
 *    the model chosen with the client's `provider`/`model` options, the agent directory in
 *    PI_CODING_AGENT_DIR and pi's default session layout under it.
 * Also a session file as pi 1.6.0 writes it (a system message, `context_edit` and `usage`
 * entries), opened with the client's switchSession.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RpcClient as OldRpcClient } from "@mariozechner/pi-coding-agent";
import type { JsonAgentSessionEvent, RpcClient as NewestRpcClient } from "pi-newest";
import { afterAll, describe, expect, it } from "vitest";
import { agentWorld, CLI, OFFLINE_PROVIDER } from "./helpers/offline-agents.js";
import { outboundViolation } from "./helpers/outbound-schema.js";
import { ROOT } from "./helpers/spawn.js";
import { poll } from "./helpers/waits.js";
import {
  expectCompleteModels,
  firstAnswer,
  isSystemMessage,
  normalise,
  statsWithoutSystemMessages,
  withoutKeys,
  withoutSystemMessageEvents,
  withoutSystemMessages,
} from "./helpers/rpc-results.js";
import { withoutBuiltins } from "./helpers/builtin-commands.js";
import { clientWorld, publicMethods, recordingCalls, settle } from "./helpers/rpc-client-class.js";

// Each class as its package ships it (the packages' roots load far more, and pi 1.6.0's needs Node 22).
const NEWEST_CLIENT_JS = join(ROOT, "node_modules/pi-newest/dist/modes/rpc/rpc-client.js");
const OLD_CLIENT_JS = join(ROOT, "node_modules/@mariozechner/pi-coding-agent/dist/modes/rpc/rpc-client.js");
const { RpcClient } = (await import(NEWEST_CLIENT_JS)) as { RpcClient: typeof NewestRpcClient };
const { RpcClient: OldClient } = (await import(OLD_CLIENT_JS)) as { RpcClient: typeof OldRpcClient };

/** The public methods of the 1.6.0 class. */
const PUBLIC_METHODS = publicMethods(NEWEST_CLIENT_JS, RpcClient.prototype);
/** Public methods of the 1.6.0 class called on parley (recorded by the proxy of `recorded`). */
const called = new Set<string>();
const recorded = (client: NewestRpcClient): NewestRpcClient => recordingCalls(client, PUBLIC_METHODS, called);

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const clean of cleanups.splice(0)) await clean();
});

// ---- 1. every public method, checked against pi 1.6.0 and compared with pi 0.73.1 --------------

/** The newest client on parley, or 0.73.1's on pi 0.73.1 (the methods both have are called alike). */
type Side = { newest: true; client: NewestRpcClient } | { newest: false; client: OldRpcClient };
interface Setup {
  side: Side;
  base: string;
  sessions: string;
  /** Every event the client delivered, from start. */
  events: JsonAgentSessionEvent[];
}

async function start(side: "parley" | "pi"): Promise<Setup> {
  const { base, cwd, env, sessions } = clientWorld(`newest-rpcclient-${side}-`);
  const options = { cliPath: CLI[side], cwd, env, args: ["--session-dir", sessions, "-e", OFFLINE_PROVIDER] };
  const events: JsonAgentSessionEvent[] = [];
  let s: Side;
  if (side === "parley") {
    const client = recorded(new RpcClient(options));
    client.onEvent((e) => events.push(e));
    s = { newest: true, client };
  } else {
    s = { newest: false, client: new OldClient(options) };
  }
  cleanups.push(async () => {
    await s.client.stop();
    rmSync(base, { recursive: true, force: true });
  });
  await s.client.start();
  await firstAnswer(s.client);
  // Both on the same model and thinking level, whatever each agent's defaults.
  await s.client.setModel("offline", "echo");
  await s.client.setThinkingLevel("medium");
  return { side: s, base, sessions, events };
}

/*
 * What pi 1.6.0 changed in the results of methods both versions have; each step below takes it
 * out of the compared value and checks it on parley against 1.6.0 instead:
 * - prompt, steer and followUp resolve to the prompt's disposition (0.73.1: undefined);
 * - waitForIdle, collectEvents and promptAndWait end at `agent_settled` (0.73.1: `agent_end`);
 * - message_update carries `usage` and the assistant event without the partial message
 *   (0.73.1: the whole message); toolcall_start carries the call's `id` and `toolName`; an
 *   assistant's message_start says stopReason "pending" (0.73.1: "stop");
 * - tool_execution_end carries `durationMs`; bash streams `bash_execution_update` with the request id;
 * - compact's result carries `estimatedTokensAfter` and the summary's `usage`;
 * - the first run records the system prompt as a `role: "system"` message (its message_start and
 *   message_end, get_messages, totalMessages; 0.73.1 records none): checked on parley, then left
 *   out of what is compared (helpers/rpc-results.ts).
 * And parley's documented addition `offlineModel` in get_state; token counts depend on each
 * agent's own prompt and tools.
 */
/** Streaming deltas and the newest pi's agent_settled are not compared with 0.73.1. */
const UNCOMPARED_EVENTS = new Set(["message_update", "agent_settled", "bash_execution_update"]);

/** The events delivered from index `from` on, of one type. */
const eventsOf = <T extends JsonAgentSessionEvent["type"]>(s: Setup, from: number, type: T): Extract<JsonAgentSessionEvent, { type: T }>[] =>
  s.events.slice(from).filter((e): e is Extract<JsonAgentSessionEvent, { type: T }> => e.type === type);

/** A step returns the value compared with pi 0.73.1; on parley it also checks what 1.6.0 returns. */
type Step = [name: string, run: (s: Setup) => Promise<unknown>];

const STEPS: Step[] = [
  ["getState", async ({ side }) => withoutKeys(await side.client.getState(), ["offlineModel"])],
  ["getAvailableModels", async ({ side }) => await side.client.getAvailableModels()],
  [
    "getAvailableThinkingLevels (newest)",
    async ({ side }) => {
      if (!side.newest) return "newest only";
      // pi-ai's supported levels for a reasoning model without a thinkingLevelMap: xhigh and max need one.
      expect(await side.client.getAvailableThinkingLevels()).toEqual(["off", "minimal", "low", "medium", "high"]);
      return "newest only";
    },
  ],
  ["setModel", ({ side }) => side.client.setModel("offline", "echo")],
  ["setModel of an unknown model", ({ side }) => side.client.setModel("nope", "missing")],
  ["setThinkingLevel", ({ side }) => side.client.setThinkingLevel("high")],
  ["cycleThinkingLevel", ({ side }) => side.client.cycleThinkingLevel()],
  ["setSteeringMode", ({ side }) => side.client.setSteeringMode("all")],
  ["setFollowUpMode", ({ side }) => side.client.setFollowUpMode("all")],
  ["setAutoCompaction", ({ side }) => side.client.setAutoCompaction(false)],
  ["setAutoRetry", ({ side }) => side.client.setAutoRetry(false)],
  ["abortRetry", ({ side }) => side.client.abortRetry()],
  ["getCommands", async ({ side }) => withoutBuiltins(await side.client.getCommands())],
  [
    "promptAndWait",
    async (s) => {
      const events: { type: string }[] = await s.side.client.promptAndWait("Reply with just: hello");
      if (s.side.newest) {
        // 1.6.0 collects up to agent_settled, which says the run was not aborted.
        expect(events.at(-1)).toEqual({ type: "agent_settled", aborted: false });
        const updates = events.filter((e): e is Extract<JsonAgentSessionEvent, { type: "message_update" }> => e.type === "message_update");
        expect(updates.length).toBeGreaterThan(0);
        for (const update of updates) {
          // The newest wire shape: no partial message, the usage so far, the event without `partial`.
          expect(Object.keys(update).sort()).toEqual(["assistantMessageEvent", "type", "usage"]);
          expect(update.assistantMessageEvent).not.toHaveProperty("partial");
          expect(update.usage).toMatchObject({ input: expect.any(Number), output: expect.any(Number) });
        }
        // pi-ai 1.6.0 starts a reply as "pending"; message_end says why it ended.
        const starts = events.filter((e): e is Extract<JsonAgentSessionEvent, { type: "message_start" }> => e.type === "message_start");
        // The first run starts with the system message pi 1.6 records (the prompt's sections, the tool declarations).
        expect(starts.map((e) => (e.message.role === "assistant" ? e.message.stopReason : e.message.role))).toEqual(["system", "user", "pending"]);
        expect(starts[0]?.message).toMatchObject({ role: "system", content: "", sections: expect.any(Object), toolsAdded: expect.any(Array) });
        const deltas = updates.flatMap((u) => (u.assistantMessageEvent.type === "text_delta" ? [u.assistantMessageEvent.delta] : []));
        expect(deltas.join("")).toBe("hello");
        return withoutSystemMessageEvents(events)
          .map((e) => e.type)
          .filter((t) => !UNCOMPARED_EVENTS.has(t));
      }
      return events.map((e) => e.type).filter((t) => !UNCOMPARED_EVENTS.has(t));
    },
  ],
  [
    "prompt + waitForIdle (template)",
    async ({ side }) => {
      const idle = side.client.waitForIdle();
      const disposition = await side.client.prompt("/greet bob");
      if (side.newest) expect(disposition).toBe("started");
      await idle;
      return side.client.getLastAssistantText();
    },
  ],
  [
    "onEvent + collectEvents (tool call)",
    async (s) => {
      const seen: string[] = [];
      const off = s.side.client.onEvent((e) => e.type.startsWith("tool_execution_") && seen.push(e.type));
      const from = s.events.length;
      const events = s.side.client.collectEvents();
      await s.side.client.prompt("please use the bash tool");
      await events;
      off();
      if (s.side.newest) {
        const starts = eventsOf(s, from, "message_update").flatMap((u) => (u.assistantMessageEvent.type === "toolcall_start" ? [u.assistantMessageEvent] : []));
        expect(starts).toHaveLength(1);
        expect(starts[0]).toMatchObject({ id: expect.stringMatching(/^call-/), toolName: "bash" });
        const [end] = eventsOf(s, from, "tool_execution_end");
        expect(end).toMatchObject({ toolName: "bash", isError: false, durationMs: expect.any(Number) });
      }
      return { seen: [...new Set(seen)], text: await s.side.client.getLastAssistantText() };
    },
  ],
  [
    "bash",
    async (s) => {
      const from = s.events.length;
      const result = await s.side.client.bash("echo unique-7");
      if (s.side.newest) {
        // 1.6.0 streams the output as bash_execution_update events carrying the request's id.
        const updates = eventsOf(s, from, "bash_execution_update");
        expect(updates.map((u) => u.delta).join("")).toBe("unique-7\n");
        expect(updates[0]?.id).toMatch(/^req_\d+$/);
      }
      return result;
    },
  ],
  ["abortBash", ({ side }) => side.client.abortBash()],
  [
    "steer and followUp while idle queue",
    async ({ side }) => {
      const dispositions = [await side.client.steer("steered while idle"), await side.client.followUp("followed while idle")];
      if (side.newest) expect(dispositions).toEqual(["queued", "queued"]);
      const state = await side.client.getState();
      return { isStreaming: state.isStreaming, pendingMessageCount: state.pendingMessageCount };
    },
  ],
  [
    "queued messages go with the next prompt",
    async ({ side }) => {
      const events: { type: string; message?: { role: string } }[] = await side.client.promptAndWait("Reply with just: after");
      // The prompt and tools are as the first run recorded them: no new system message (as pi 1.6).
      if (side.newest) expect(events.filter((e) => e.type === "message_end" && isSystemMessage(e.message))).toEqual([]);
      return events.filter((e) => e.type === "message_end").map((e) => e.message?.role ?? "");
    },
  ],
  [
    "clearQueue (newest)",
    async ({ side }) => {
      if (!side.newest) return "newest only";
      expect(await side.client.clearQueue()).toEqual({ steering: [], followUp: [] });
      await side.client.steer("s1");
      await side.client.followUp("f1");
      await side.client.steer("s2");
      expect(await side.client.clearQueue()).toEqual({ steering: ["s1", "s2"], followUp: ["f1"] });
      expect((await side.client.getState()).pendingMessageCount).toBe(0);
      return "newest only";
    },
  ],
  [
    "abort (newest: a prompt queued with streamingBehavior while the run goes on)",
    async (s) => {
      const { side } = s;
      const from = s.events.length;
      const events = side.client.collectEvents();
      // Listening before the prompt: its response and the first events may arrive in one read.
      const started = new Promise<void>((resolve) => {
        const off = side.client.onEvent((e) => {
          if (e.type === "tool_execution_start") {
            off();
            resolve();
          }
        });
      });
      await side.client.prompt("please sleep");
      await started;
      if (side.newest) {
        expect(await side.client.prompt("later, please", undefined, "followUp")).toBe("queued");
        expect(await side.client.prompt("now, please", undefined, "steer")).toBe("queued");
        expect(await side.client.clearQueue()).toEqual({ steering: ["now, please"], followUp: ["later, please"] });
      }
      await side.client.abort();
      await events;
      if (side.newest) expect(eventsOf(s, from, "agent_settled")).toEqual([{ type: "agent_settled", aborted: true }]);
      const last = (await side.client.getMessages()).at(-1);
      return last?.role === "assistant" ? last.stopReason : last?.role;
    },
  ],
  [
    "getMessages",
    async ({ side }) => {
      const messages: { role: string }[] = await side.client.getMessages();
      if (!side.newest) return messages.map((m) => m.role);
      // One system message, recorded by the first run before its user message (as pi 1.6).
      expect(messages.filter(isSystemMessage)).toHaveLength(1);
      expect(messages[0]?.role).toBe("system");
      return withoutSystemMessages(messages).map((m) => m.role);
    },
  ],
  [
    "getSessionStats",
    async ({ side }) => {
      const stats = await side.client.getSessionStats();
      if (!side.newest) return stats;
      // One linear branch so far: its one system message is counted in totalMessages, as pi 1.6 counts it.
      expect((await side.client.getMessages()).filter(isSystemMessage)).toHaveLength(1);
      return statsWithoutSystemMessages(stats, 1);
    },
  ],
  ["getForkMessages", ({ side }) => side.client.getForkMessages()],
  [
    "getEntries and getTree (newest)",
    async ({ side }) => {
      if (!side.newest) return "newest only";
      const { entries, leafId } = await side.client.getEntries();
      expect(entries.length).toBeGreaterThan(4);
      expect(leafId).toBe(entries.at(-1)?.id);
      const [first, second] = entries;
      expect(first?.parentId).toBeNull();
      expect(second?.parentId).toBe(first?.id);
      expect((await side.client.getEntries(second?.id)).entries.map((e) => e.id)).toEqual(entries.slice(2).map((e) => e.id));
      await expect(side.client.getEntries("no-such-entry")).rejects.toThrow("Entry not found: no-such-entry");
      const tree = await side.client.getTree();
      expect(tree.leafId).toBe(leafId);
      const chain: string[] = [];
      for (let nodes = tree.tree; nodes.length > 0; nodes = nodes[0]?.children ?? []) {
        expect(nodes).toHaveLength(1);
        chain.push(nodes[0]?.entry.id ?? "");
      }
      expect(chain).toEqual(entries.map((e) => e.id));
      return "newest only";
    },
  ],
  [
    "compact",
    async ({ side }) => {
      const result = await side.client.compact();
      if (side.newest) {
        expect(result).toMatchObject({
          // The last turn is cut in two by the budget of one token: its checkpoint follows the history's summary.
          summary: expect.stringContaining("Summary of the conversation."),
          firstKeptEntryId: expect.any(String),
          estimatedTokensAfter: expect.any(Number),
        });
        expect(result.tokensBefore).toBeGreaterThan(0);
      }
      return withoutKeys(result, ["estimatedTokensAfter", "usage"]);
    },
  ],
  [
    "setSessionName",
    async (s) => {
      const from = s.events.length;
      await s.side.client.setSessionName("named");
      // 1.6.0 tells the client: session_info_changed (before the response, so already delivered).
      if (s.side.newest) expect(eventsOf(s, from, "session_info_changed")).toEqual([{ type: "session_info_changed", name: "named" }]);
      return (await s.side.client.getState()).sessionName;
    },
  ],
  ["exportHtml", async ({ side, base }) => side.client.exportHtml(join(base, "out.html"))],
  ["clone", ({ side }) => side.client.clone()],
  ["fork", async ({ side }) => side.client.fork((await side.client.getForkMessages())[0]?.entryId ?? "none")],
  ["fork with an unknown id", ({ side }) => side.client.fork("nope")],
  ["newSession", ({ side }) => side.client.newSession()],
  [
    "switchSession",
    async ({ side, sessions }) => {
      const first =
        readdirSync(sessions)
          .filter((f) => f.endsWith(".jsonl"))
          .sort()[0] ?? "";
      const result = await side.client.switchSession(join(sessions, first));
      return { result, messages: (await side.client.getMessages()).length > 0 };
    },
  ],
  ["getLastAssistantText", ({ side }) => side.client.getLastAssistantText()],
  ["getStderr", async ({ side }) => typeof side.client.getStderr()],
  [
    "stop",
    async ({ side }) => {
      await side.client.stop();
      // Stopped: a request fails at once rather than waiting for an answer.
      return settle(() => side.client.getState());
    },
  ],
];

describe("the newest pi's RpcClient (1.6.0) drives parley", () => {
  it("every public method answers as pi 1.6.0 documents it, and as pi 0.73.1 answers where the versions agree", async () => {
    const [parley, pi] = await Promise.all([start("parley"), start("pi")]);
    const results: { parley: [string, unknown][]; pi: [string, unknown][] } = { parley: [], pi: [] };
    await Promise.all(
      (
        [
          ["parley", parley],
          ["pi", pi],
        ] as const
      ).map(async ([name, setup]) => {
        for (const [step, run] of STEPS) {
          const outcome = await settle(() => run(setup), step);
          results[name].push([step, normalise(outcome, setup.base)]);
        }
      }),
    );
    // All differences at once, each under its step's name.
    const differing = results.pi.filter(([, piResult], i) => JSON.stringify(piResult) !== JSON.stringify(results.parley[i]?.[1]));
    expect(Object.fromEntries(differing.map(([name]) => [name, results.parley.find(([n]) => n === name)?.[1]]))).toEqual(Object.fromEntries(differing));
    // Not vacuous: both ran every step, and the steps did what they say.
    expect([results.parley.length, results.pi.length]).toEqual([STEPS.length, STEPS.length]);
    expect(Object.fromEntries(results.pi)["prompt + waitForIdle (template)"]).toEqual({ ok: "hi-bob" });
    const got = Object.fromEntries(results.parley);
    expect(got["prompt + waitForIdle (template)"]).toEqual({ ok: "hi-bob" });
    expect(got["setModel of an unknown model"]).toEqual({ error: "Model not found: nope/missing" });
    expect(got["fork with an unknown id"]).toEqual({ error: "Invalid entry ID for forking" });
    expect(got["steer and followUp while idle queue"]).toEqual({ ok: { isStreaming: false, pendingMessageCount: 2 } });
    expect(got["abort (newest: a prompt queued with streamingBehavior while the run goes on)"]).toEqual({ ok: "aborted" });
    expect(got["setSessionName"]).toEqual({ ok: "named" });
    expect(got["stop"]).toEqual({ ok: { error: "Client not started" } });
    for (const step of ["getAvailableThinkingLevels (newest)", "clearQueue (newest)", "getEntries and getTree (newest)"])
      expect(got[step]).toEqual({ ok: "newest only" });
  }, 300_000);

  it("cycleModel: null with one available model, as in pi (parley's demo model is only a last resort)", async () => {
    const { side } = await start("parley");
    expect((await side.client.getAvailableModels()).map((m) => `${m.provider}/${m.id}`)).toEqual(["offline/echo"]);
    expect(await side.client.cycleModel()).toBeNull();
  }, 120_000);

  it("start() with the client's own options: cliPath, cwd, env, provider/model and args mean what they mean for pi", async () => {
    const { base, cwd, env, agentDir } = agentWorld("newest-rpcclient-spawn-");
    cleanups.push(() => rmSync(base, { recursive: true, force: true }));
    // cwd: a project prompt template; env: the agent dir's own template (PI_CODING_AGENT_DIR);
    // args: the session dir and the offline provider; provider/model: chosen at start-up.
    mkdirSync(join(cwd, ".pi", "prompts"), { recursive: true });
    writeFileSync(join(cwd, ".pi", "prompts", "from-project.md"), "---\ndescription: project template\n---\nReply with just: project\n");
    writeFileSync(join(agentDir, "trust.json"), JSON.stringify({ [realpathSync(cwd)]: true }));
    mkdirSync(join(agentDir, "prompts"), { recursive: true });
    writeFileSync(join(agentDir, "prompts", "from-agent-dir.md"), "---\ndescription: global template\n---\nReply with just: global\n");
    const sessions = join(base, "my-sessions");
    const client = recorded(
      new RpcClient({ cliPath: CLI.parley, cwd, env, provider: "offline", model: "echo", args: ["--session-dir", sessions, "-e", OFFLINE_PROVIDER] }),
    );
    cleanups.push(() => client.stop());
    await client.start();
    await firstAnswer(client);
    const state = await client.getState();
    expect(state.model).toMatchObject({ provider: "offline", id: "echo" });
    expect(state.sessionFile?.startsWith(sessions)).toBe(true);
    const commands = await client.getCommands();
    expect(commands.filter((c) => c.source === "prompt").map((c) => c.name)).toEqual(expect.arrayContaining(["from-project", "from-agent-dir"]));
    expect((await client.promptAndWait("/from-project")).some((e) => e.type === "agent_settled")).toBe(true);
    expect(await client.getLastAssistantText()).toBe("project");
    await poll(
      () => existsSync(state.sessionFile ?? "") && readFileSync(state.sessionFile ?? "", "utf8").includes('"project"'),
      "the reply saved in --session-dir",
    );
    await client.stop();
    await expect(client.getState()).rejects.toThrow("Client not started");
  }, 120_000);

  it("start() rejects, naming the exit, when parley exits at start-up (an unknown provider)", async () => {
    const { base, cwd, env } = agentWorld("newest-rpcclient-bad-");
    cleanups.push(() => rmSync(base, { recursive: true, force: true }));
    const client = new RpcClient({ cliPath: CLI.parley, cwd, env, provider: "no-such-provider", model: "x", args: ["--no-session"] });
    cleanups.push(() => client.stop());
    // start() waits only a moment; a slower exit rejects the first request instead, as with pi.
    const outcome = await settle(async () => {
      await client.start();
      await client.getState();
    });
    // pi 1.6.0 exits 1 for start-up errors, and so does parley.
    expect(outcome).toMatchObject({ error: expect.stringMatching(/^Agent process exited \(code=1 signal=null\)\. Stderr: .*no-such-provider/) });
    expect(client.getStderr()).toMatch(/no-such-provider/);
  }, 120_000);
});

// ---- a session file written by pi 1.6.0, with its newer entry types ------------------------------

describe("a pi 1.6.0 session file, opened with the 1.6.0 client", () => {
  it("usage and context_edit entries: listed by get_entries, applied to the model context, counted in the stats", async () => {
    const { base, cwd, env } = agentWorld("newest-rpcclient-file-");
    cleanups.push(() => rmSync(base, { recursive: true, force: true }));
    const usage = (input: number) => ({
      input,
      output: 5,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: input + 5,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.5 },
    });
    const at = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, "0")}.000Z`;
    const assistant = (content: unknown[], stopReason: string) => ({
      role: "assistant",
      content,
      api: "openai-completions",
      provider: "offline",
      model: "echo",
      usage: usage(10),
      stopReason,
      timestamp: 1,
    });
    const lines = [
      { type: "session", version: 3, id: "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000", timestamp: at(0), cwd },
      // pi 1.6.0 records its system prompt in the transcript (parley never sends it to the model).
      {
        type: "message",
        id: "e0000000",
        parentId: null,
        timestamp: at(1),
        message: { role: "system", content: "You are pi.", sections: { tools: "<tools/>" }, timestamp: 1 },
      },
      { type: "message", id: "e0000001", parentId: "e0000000", timestamp: at(1), message: { role: "user", content: "first question", timestamp: 1 } },
      {
        type: "message",
        id: "e0000002",
        parentId: "e0000001",
        timestamp: at(2),
        message: { ...assistant([{ type: "text", text: "failed half" }], "error"), errorMessage: "overloaded" },
      },
      // pi 1.6.0 leaves a failed attempt out of the context once it retries.
      { type: "context_edit", id: "e0000003", parentId: "e0000002", timestamp: at(3), targetId: "e0000002", replacement: null },
      { type: "message", id: "e0000004", parentId: "e0000003", timestamp: at(4), message: assistant([{ type: "text", text: "original answer" }], "stop") },
      { type: "context_edit", id: "e0000005", parentId: "e0000004", timestamp: at(5), targetId: "e0000004", replacement: { content: "edited answer" } },
      { type: "usage", id: "e0000006", parentId: "e0000005", timestamp: at(6), kind: "cache_warm", provider: "offline", model: "echo", usage: usage(100) },
    ];
    const file = join(base, "from-pi-1.6.0.jsonl");
    writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    const client = recorded(new RpcClient({ cliPath: CLI.parley, cwd, env, args: ["--session-dir", join(base, "sessions"), "-e", OFFLINE_PROVIDER] }));
    cleanups.push(() => client.stop());
    await client.start();
    await firstAnswer(client);
    expect(await client.switchSession(file)).toEqual({ cancelled: false });

    const { entries, leafId } = await client.getEntries();
    // The file recorded no thinking level: the switch records the one the session goes on with, as pi does.
    expect(entries.map((e) => e.type)).toEqual(["message", "message", "message", "context_edit", "message", "context_edit", "usage", "thinking_level_change"]);
    expect(leafId).toBe(entries[7]?.id);
    expect(entries.slice(0, 7)).toEqual(lines.slice(1));
    expect(entries[7]).toMatchObject({ parentId: "e0000006" });
    expect((await client.getTree()).tree[0]?.entry.id).toBe("e0000000");
    // The model sees the first question and the edited answer; the failed attempt is left out.
    const messages = await client.getMessages();
    expect(messages.map((m) => (m.role === "user" || m.role === "assistant" ? [m.role, m.content] : [m.role]))).toEqual([
      ["system"],
      ["user", "first question"],
      ["assistant", [{ type: "text", text: "edited answer" }]],
    ]);
    // As pi 1.6.0: counts over the session's entries, tokens and cost with the usage entry's.
    const stats = await client.getSessionStats();
    expect(stats).toMatchObject({ userMessages: 1, assistantMessages: 2, totalMessages: 4, tokens: { input: 120, output: 15, total: 135 }, cost: 1.5 });
    // Each answer fits the published schema (the client passes on only `data`).
    for (const [command, data] of [
      ["get_entries", { entries, leafId }],
      ["get_messages", { messages }],
      ["get_session_stats", stats],
    ] as const) {
      expect(outboundViolation({ id: "x", type: "response", command, success: true, data })).toBeUndefined();
    }
    // A prompt goes on from there (convertToLlm leaves system messages out, as parley has its own prompt).
    await client.promptAndWait("Reply with just: onwards");
    expect(await client.getLastAssistantText()).toBe("onwards");
    // The file is the user's: it is appended to, never rewritten.
    expect(readFileSync(file, "utf8").startsWith(`${lines.map((l) => JSON.stringify(l)).join("\n")}\n`)).toBe(true);
  }, 120_000);
});

// ---- 3. the newest pi's RPC test file, in our words, through the 1.6.0 client -------------------

interface World {
  client: NewestRpcClient;
  /** PI_CODING_AGENT_DIR, as pi's file sets it (its sessions/ holds the session files). */
  agentDir: string;
  cwd: string;
}

/** A client as pi's file makes one: model by provider/model options, agent dir by env, default session layout. */
async function world(): Promise<World> {
  const { base, cwd, env, agentDir } = agentWorld("newest-rpc-file-");
  // As pi's own compaction tests: a budget of one token, since pi 1.6 refuses to compact what fits keepRecentTokens.
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 1 } }));
  const client = recorded(new RpcClient({ cliPath: CLI.parley, cwd, env, provider: "offline", model: "echo", args: ["-e", OFFLINE_PROVIDER] }));
  cleanups.push(async () => {
    await client.stop();
    rmSync(base, { recursive: true, force: true });
  });
  await client.start();
  await firstAnswer(client);
  return { client, agentDir, cwd };
}

type Entry = { type: string; [key: string]: unknown };

/** The entries of the one session file under `<agentDir>/sessions/<project folder>/` (pi's layout). */
function savedEntries(agentDir: string): Entry[] {
  const sessions = join(agentDir, "sessions");
  const folders = readdirSync(sessions);
  expect(folders).toHaveLength(1);
  const folder = join(sessions, folders[0] ?? "");
  const files = readdirSync(folder).filter((f) => f.endsWith(".jsonl"));
  expect(files).toHaveLength(1);
  return readFileSync(join(folder, files[0] ?? ""), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Entry);
}

/** Waits until the saved session holds an entry matching `match` (parley appends as it goes). */
async function savedWhen(agentDir: string, match: (e: Entry) => boolean, what: string): Promise<Entry[]> {
  await poll(() => {
    try {
      return savedEntries(agentDir).some(match);
    } catch {
      return false;
    }
  }, what);
  return savedEntries(agentDir);
}

const role = (e: Entry): string | undefined => (e.type === "message" ? (e["message"] as { role?: string } | undefined)?.role : undefined);
const assistantText = (events: JsonAgentSessionEvent[]): string => {
  const end = events.find((e) => e.type === "message_end" && e.message.role === "assistant");
  if (end?.type !== "message_end" || end.message.role !== "assistant") return "";
  return end.message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
};

describe("the newest pi's RPC test file, through its own RpcClient, against parley", () => {
  it("get_state: the model chosen by the client's options, idle, no messages", async () => {
    const { client } = await world();
    const state = await client.getState();
    expect(state.model).toMatchObject({ provider: "offline", id: "echo" });
    expect(state.isStreaming).toBe(false);
    expect(state.messageCount).toBe(0);
  });

  it("a prompt's messages are saved in the agent dir's sessions/<project>/ file, after a session header", async () => {
    const { client, agentDir } = await world();
    const events = await client.promptAndWait("Reply with just the word 'hello'");
    expect(events.filter((e) => e.type === "message_end").length).toBeGreaterThanOrEqual(2);
    const entries = await savedWhen(agentDir, (e) => role(e) === "assistant", "the assistant message saved");
    expect(entries[0]?.type).toBe("session");
    expect(entries.map(role)).toEqual(expect.arrayContaining(["user", "assistant"]));
  });

  it("compact returns a summary and saves one compaction entry", async () => {
    const { client, agentDir } = await world();
    await client.promptAndWait("Say hello");
    const result = await client.compact();
    expect(result.summary).toBeTruthy();
    expect(result.tokensBefore).toBeGreaterThan(0);
    const compactions = (await savedWhen(agentDir, (e) => e.type === "compaction", "the compaction saved")).filter((e) => e.type === "compaction");
    expect(compactions).toHaveLength(1);
    expect(compactions[0]?.["summary"]).toBe(result.summary);
  });

  it("bash runs a command: output, exit code 0, not cancelled", async () => {
    const { client } = await world();
    const result = await client.bash("echo hello");
    expect(result.output.trim()).toBe("hello");
    expect(result.exitCode).toBe(0);
    expect(result.cancelled).toBe(false);
  });

  it("bash output is saved as one bashExecution message", async () => {
    const { client, agentDir } = await world();
    await client.promptAndWait("Say hi");
    await client.bash("echo value-8472");
    const bash = (await savedWhen(agentDir, (e) => role(e) === "bashExecution", "the bash message saved")).filter((e) => role(e) === "bashExecution");
    expect(bash).toHaveLength(1);
    expect((bash[0]?.["message"] as { output: string }).output).toContain("value-8472");
  });

  it("bash output reaches the model with the next prompt", async () => {
    const { client } = await world();
    await client.bash("echo unique-3391");
    const events = await client.promptAndWait("What was the exact output of the echo command I just ran? Reply with just the value, nothing else.");
    expect(assistantText(events)).toContain("unique-3391");
  });

  it("set_thinking_level shows in get_state", async () => {
    const { client } = await world();
    await client.setThinkingLevel("high");
    expect((await client.getState()).thinkingLevel).toBe("high");
  });

  it("cycle_thinking_level moves to another level, which get_state then shows", async () => {
    const { client } = await world();
    const before = (await client.getState()).thinkingLevel;
    const cycled = await client.cycleThinkingLevel();
    expect(cycled?.level).toBeDefined();
    expect(cycled?.level).not.toBe(before);
    expect((await client.getState()).thinkingLevel).toBe(cycled?.level);
  });

  it("get_available_thinking_levels holds the current level, and cycling lands within it", async () => {
    const { client } = await world();
    const levels = await client.getAvailableThinkingLevels();
    expect(levels.length).toBeGreaterThan(1);
    const { thinkingLevel } = await client.getState();
    expect(levels).toContain(thinkingLevel);
    const cycled = await client.cycleThinkingLevel();
    expect(levels).toContain(cycled?.level);
    expect(cycled?.level).not.toBe(thinkingLevel);
  });

  it("get_available_models: each model has a provider, an id, a context window and a reasoning flag", async () => {
    const { client } = await world();
    const models = await client.getAvailableModels();
    expectCompleteModels(models);
  });

  it("get_session_stats after a prompt: file, id, one user and one assistant message at least", async () => {
    const { client } = await world();
    await client.promptAndWait("Hello");
    const stats = await client.getSessionStats();
    expect(stats.sessionFile).toBeTruthy();
    expect(stats.sessionId).toBeTruthy();
    expect(stats.userMessages).toBeGreaterThanOrEqual(1);
    expect(stats.assistantMessages).toBeGreaterThanOrEqual(1);
  });

  it("new_session leaves no messages", async () => {
    const { client } = await world();
    await client.promptAndWait("Hello");
    expect((await client.getState()).messageCount).toBeGreaterThan(0);
    expect(await client.newSession()).toEqual({ cancelled: false });
    expect((await client.getState()).messageCount).toBe(0);
  });

  it("export_html writes an .html file at the path it returns", async () => {
    const { client, cwd } = await world();
    await client.promptAndWait("Hello");
    const { path } = await client.exportHtml();
    expect(path.endsWith(".html")).toBe(true);
    // pi's file checks the path as given, from its own folder, which is the agent's there; here the
    // agent works in its world's folder. pi 1.6 answers the file name alone, relative to that folder.
    expect(path).toMatch(/^pi-session-[^/]+\.html$/);
    expect(existsSync(join(cwd, path))).toBe(true);
  });

  it("get_last_assistant_text: undefined before any reply, then the reply", async () => {
    const { client } = await world();
    expect(await client.getLastAssistantText()).toBeUndefined();
    await client.promptAndWait("Reply with just: test123");
    expect(await client.getLastAssistantText()).toContain("test123");
  });

  it("get_entries: every entry has an id, the leaf is the last; a since cursor; an unknown one is an error", async () => {
    const { client } = await world();
    await client.promptAndWait("Reply with just 'ok'");
    const { entries, leafId } = await client.getEntries();
    expect(entries.length).toBeGreaterThanOrEqual(2);
    for (const entry of entries) expect(entry.id).toBeTruthy();
    expect(leafId).toBe(entries.at(-1)?.id);
    const since = await client.getEntries(entries[0]?.id);
    expect(since.entries.map((e) => e.id)).toEqual(entries.slice(1).map((e) => e.id));
    expect(since.leafId).toBe(leafId);
    await expect(client.getEntries("nonexistent-id")).rejects.toThrow("Entry not found");
  });

  it("get_tree: one root whose single chain is the entries, with the same leaf", async () => {
    const { client } = await world();
    await client.promptAndWait("Reply with just 'ok'");
    const { entries, leafId } = await client.getEntries();
    const { tree, leafId: treeLeaf } = await client.getTree();
    expect(treeLeaf).toBe(leafId);
    expect(tree).toHaveLength(1);
    const chain: string[] = [];
    let nodes = tree;
    while (nodes.length === 1 && nodes[0]) {
      chain.push(nodes[0].entry.id);
      nodes = nodes[0].children;
    }
    expect(nodes).toHaveLength(0);
    expect(chain).toEqual(entries.map((e) => e.id));
  });

  it("get_entries after compact: the earlier entries are kept, in order, then a compaction", async () => {
    const { client } = await world();
    await client.promptAndWait("Reply with just 'ok'");
    const before = await client.getEntries();
    await client.compact();
    const after = await client.getEntries();
    expect(after.entries.slice(0, before.entries.length).map((e) => e.id)).toEqual(before.entries.map((e) => e.id));
    expect(after.entries.some((e) => e.type === "compaction")).toBe(true);
  });

  it("set_session_name: none at first, then the name in get_state and one session_info entry saved", async () => {
    const { client, agentDir } = await world();
    expect((await client.getState()).sessionName).toBeUndefined();
    await client.promptAndWait("Reply with just 'ok'");
    await client.setSessionName("my-test-session");
    expect((await client.getState()).sessionName).toBe("my-test-session");
    const info = (await savedWhen(agentDir, (e) => e.type === "session_info", "the session_info entry saved")).filter((e) => e.type === "session_info");
    expect(info).toHaveLength(1);
    expect(info[0]?.["name"]).toBe("my-test-session");
  });
});

// Runs last (a file's tests run in order): every test above has called what it calls.
describe("coverage of the 1.6.0 RpcClient", () => {
  it("the tests above called every public method of pi 1.6.0's RpcClient on parley", () => {
    expect(PUBLIC_METHODS.length).toBeGreaterThanOrEqual(40);
    expect(PUBLIC_METHODS.filter((m) => !called.has(m))).toEqual([]);
  });
});
