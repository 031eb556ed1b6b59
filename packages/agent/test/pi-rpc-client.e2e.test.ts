/**
 * pi's own client, unchanged, against both agents: the `RpcClient` class shipped in the reference
 * package (@mariozechner/pi-coding-agent 0.73.1) spawns `pi` and parley the same way (`node CLI
 * --mode rpc …`), both running the same offline model (fixtures/offline-provider.ts, loaded with
 * `-e`). Every public method is called in the same order on both, and each result is compared
 * after normalising what differs from run to run (ids, timestamps, temp paths).
 *
 * The public methods are read from the shipped class's prototype (less what its .d.ts marks
 * private), and a test fails when one was not called on both agents.
 *
 * Then the scenarios of pi's own RPC test file (packages/coding-agent/test/rpc.test.ts in pi's
 * repository), written here in our own words, run against both agents, with the model chosen at
 * start-up with `--provider offline --model echo` as pi's file does (nothing is fetched).
 *
 * Differences that remain, each normalised by name below and listed in the README:
 * - `offlineModel: true` in get_state (a parley addition) is dropped;
 * - token counts depend on each agent's own system prompt and tool texts: numbers → "<n>";
 * - compact's result carries `estimatedTokensAfter` and `usage` in parley (newer than 0.73.1): dropped.
 * - For the methods, both are put on the offline model with set_model and on thinking level
 *   "medium" after start-up, so that every method starts from the same state.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { RpcClient as PiRpcClient } from "@mariozechner/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { AGENTS, CLI, OFFLINE_PROVIDER, type AgentName } from "./helpers/offline-agents.js";
import { ROOT } from "./helpers/spawn.js";
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

// The class as the package ships it (its package exports only the root, which loads far more).
const RPC_CLIENT_JS = join(ROOT, "node_modules/@mariozechner/pi-coding-agent/dist/modes/rpc/rpc-client.js");
const { RpcClient } = (await import(RPC_CLIENT_JS)) as { RpcClient: typeof PiRpcClient };

/** The public methods of the shipped class (handleLine, send, getData are private in 0.73.1). */
const PUBLIC_METHODS = publicMethods(RPC_CLIENT_JS, RpcClient.prototype);

/** Public methods called on a client of each agent, through the clients' proxies. */
const called: Record<AgentName, Set<string>> = { pi: new Set(), parley: new Set() };

/** The client, with each call of a prototype method recorded for the coverage check. */
const recorded = (client: PiRpcClient, agent: AgentName): PiRpcClient => recordingCalls(client, PUBLIC_METHODS, called[agent]);

interface Setup {
  agent: AgentName;
  client: PiRpcClient;
  base: string;
  cwd: string;
  sessions: string;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const clean of cleanups.splice(0)) await clean();
});

/**
 * A started client for one agent: private HOME, a project with a prompt template, the offline model selected.
 * `how`: "set_model" puts the client on the offline model with set_model and thinking "medium"
 * after start-up; "flags" chooses it at start-up with `--provider offline --model echo`, as pi's own
 * RPC tests choose their model, and leaves the thinking level to each agent's default.
 */
async function start(agent: AgentName, how: "set_model" | "flags" = "set_model"): Promise<Setup> {
  const { base, cwd, env, sessions } = clientWorld(`rpcclient-${agent}-`);
  const client = recorded(
    new RpcClient({
      cliPath: CLI[agent],
      cwd,
      env,
      args: ["--session-dir", sessions, "-e", OFFLINE_PROVIDER, ...(how === "flags" ? ["--provider", "offline", "--model", "echo"] : [])],
    }),
    agent,
  );
  cleanups.push(async () => {
    await client.stop();
    rmSync(base, { recursive: true, force: true });
  });
  await client.start();
  await firstAnswer(client);
  if (how === "flags") return { agent, client, base, cwd, sessions };
  await client.setModel("offline", "echo");
  // pi starts at its default thinking level (settings); both are put on the same footing here.
  await client.setThinkingLevel("medium");
  return { agent, client, base, cwd, sessions };
}

/** Streaming deltas (parley's are delta-only) and parley's agent_settled are not compared here. */
const UNCOMPARED_EVENTS = new Set(["message_update", "agent_settled"]);

type Step = [name: string, run: (s: Setup) => Promise<unknown>];

/**
 * What is compared with pi 0.73.1: parley's items without the system messages it records as pi
 * 1.6 does (helpers/rpc-results.ts: a documented difference from 0.73, pi 1.6 the reference);
 * pi 0.73.1's as they are, which have none.
 */
function as073<T>(s: Setup, items: readonly T[], leaveOut: (items: readonly T[]) => T[]): T[] {
  if (s.agent === "parley") return leaveOut(items);
  expect(leaveOut(items), "pi 0.73.1 records no system message").toEqual(items);
  return [...items];
}

/** Every public method of pi's RpcClient, in an order that gives each something to work on. */
const STEPS: Step[] = [
  ["getState", async ({ client }) => withoutKeys(await client.getState(), ["offlineModel"])],
  ["getAvailableModels", async ({ client }) => await client.getAvailableModels()],
  ["setModel", ({ client }) => client.setModel("offline", "echo")],
  ["setThinkingLevel", ({ client }) => client.setThinkingLevel("high")],
  ["cycleThinkingLevel", ({ client }) => client.cycleThinkingLevel()],
  ["setSteeringMode", ({ client }) => client.setSteeringMode("all")],
  ["setFollowUpMode", ({ client }) => client.setFollowUpMode("all")],
  ["setAutoCompaction", ({ client }) => client.setAutoCompaction(false)],
  ["setAutoRetry", ({ client }) => client.setAutoRetry(false)],
  ["abortRetry", ({ client }) => client.abortRetry()],
  ["getCommands", async ({ client }) => withoutBuiltins(await client.getCommands())],
  [
    "promptAndWait",
    async (s) =>
      as073(s, await s.client.promptAndWait("Reply with just: hello"), withoutSystemMessageEvents)
        .map((e): string => e.type)
        .filter((t) => !UNCOMPARED_EVENTS.has(t)),
  ],
  [
    "prompt + waitForIdle (template)",
    async ({ client }) => {
      const idle = client.waitForIdle();
      await client.prompt("/greet bob");
      await idle;
      return client.getLastAssistantText();
    },
  ],
  [
    "onEvent + collectEvents (tool call)",
    async ({ client }) => {
      const seen: string[] = [];
      const off = client.onEvent((e) => e.type.startsWith("tool_execution_") && seen.push(e.type));
      const events = client.collectEvents();
      await client.prompt("please use the bash tool");
      await events;
      off();
      return { seen: [...new Set(seen)], text: await client.getLastAssistantText() };
    },
  ],
  ["bash", ({ client }) => client.bash("echo unique-7")],
  ["abortBash", ({ client }) => client.abortBash()],
  [
    "steer while idle queues",
    async ({ client }) => {
      await client.steer("steered while idle");
      await client.followUp("followed while idle");
      const state = await client.getState();
      return { isStreaming: state.isStreaming, pendingMessageCount: state.pendingMessageCount };
    },
  ],
  [
    "queued messages go with the next prompt",
    async (s) =>
      as073(s, await s.client.promptAndWait("Reply with just: after"), withoutSystemMessageEvents)
        .filter((e) => e.type === "message_end")
        .map((e) => (e.type === "message_end" ? e.message.role : "")),
  ],
  [
    "abort",
    async ({ client }) => {
      const events = client.collectEvents();
      // Listening before the prompt: its response and the first events may arrive in one read.
      const started = new Promise<void>((resolve) => {
        const off = client.onEvent((e) => {
          if (e.type === "tool_execution_start") {
            off();
            resolve();
          }
        });
      });
      await client.prompt("please sleep");
      await started;
      await client.abort();
      await events;
      const last = (await client.getMessages()).at(-1);
      return last?.role === "assistant" ? last.stopReason : last?.role;
    },
  ],
  ["getMessages", async (s) => as073(s, await s.client.getMessages(), withoutSystemMessages).map((m) => m.role)],
  [
    "getSessionStats",
    async (s) => {
      // The session is one linear branch here, so its messages are what the stats count.
      const recorded = (await s.client.getMessages()).filter(isSystemMessage).length;
      const stats = await s.client.getSessionStats();
      if (s.agent === "parley") return statsWithoutSystemMessages(stats, recorded);
      expect(recorded, "pi 0.73.1 records no system message").toBe(0);
      return stats;
    },
  ],
  ["getForkMessages", ({ client }) => client.getForkMessages()],
  ["compact", async ({ client }) => withoutKeys(await client.compact(), ["estimatedTokensAfter", "usage"])],
  ["setSessionName", ({ client }) => client.setSessionName("named")],
  ["exportHtml", async ({ client, base }) => client.exportHtml(join(base, "out.html"))],
  ["clone", ({ client }) => client.clone()],
  ["fork", async ({ client }) => client.fork((await client.getForkMessages())[0]?.entryId ?? "none")],
  ["fork with an unknown id", ({ client }) => client.fork("nope")],
  ["newSession", ({ client }) => client.newSession()],
  [
    "switchSession",
    async ({ client, sessions }) => {
      const first =
        readdirSync(sessions)
          .filter((f) => f.endsWith(".jsonl"))
          .sort()[0] ?? "";
      const result = await client.switchSession(join(sessions, first));
      return { result, messages: (await client.getMessages()).length > 0 };
    },
  ],
  ["getLastAssistantText", ({ client }) => client.getLastAssistantText()],
  ["getStderr", async ({ client }) => typeof client.getStderr()],
  ["stop", ({ client }) => client.stop()],
];

describe("pi's RpcClient drives parley as it drives pi", () => {
  it("every public method returns what it returns from pi", async () => {
    const setups = await Promise.all(AGENTS.map((agent) => start(agent)));
    const results: Record<AgentName, [string, unknown][]> = { pi: [], parley: [] };
    await Promise.all(
      AGENTS.map(async (agent, i) => {
        const setup = setups[i] as Setup;
        for (const [name, run] of STEPS) results[agent].push([name, normalise(await settle(() => run(setup), name), setup.base)]);
      }),
    );
    // All differences at once, each under its method's name.
    const differing = results.pi.filter(([, piResult], i) => JSON.stringify(piResult) !== JSON.stringify((results.parley[i] as [string, unknown])[1]));
    expect(Object.fromEntries(differing.map(([name], i) => [name, results.parley[results.pi.findIndex(([n]) => n === name)]?.[1] ?? i]))).toEqual(
      Object.fromEntries(differing),
    );
    // Not vacuous: the steps did what they say on pi.
    const pi = Object.fromEntries(results.pi);
    expect(pi["prompt + waitForIdle (template)"]).toEqual({ ok: "hi-bob" });
    expect(pi["fork with an unknown id"]).toEqual({ error: "Invalid entry ID for forking" });
    expect(pi["steer while idle queues"]).toEqual({ ok: { isStreaming: false, pendingMessageCount: 2 } });
    expect(pi["abort"]).toEqual({ ok: "aborted" });
  }, 240_000);

  it("cycleModel: null when one model is available (parley's demo model is only a last resort, never listed beside real ones)", async () => {
    const [pi, parley] = await Promise.all(AGENTS.map((agent) => start(agent)));
    expect(await (parley as Setup).client.getAvailableModels()).toEqual(await (pi as Setup).client.getAvailableModels());
    expect(await (pi as Setup).client.cycleModel()).toBeNull();
    expect(await (parley as Setup).client.cycleModel()).toBeNull();
  }, 120_000);

  // Runs after the two tests above (a file's tests run in order): they call every method between them.
  it("the two tests above called every public method of pi's RpcClient on both agents", () => {
    expect(PUBLIC_METHODS.length).toBeGreaterThanOrEqual(35);
    for (const agent of AGENTS) expect({ agent, notCalled: PUBLIC_METHODS.filter((m) => !called[agent].has(m)) }).toEqual({ agent, notCalled: [] });
  });
});

// ---- the scenarios of pi's own RPC test file, against both agents ------------------------------

/** The session file(s) an agent wrote under its session dir. */
function sessionEntries(sessions: string): { type: string; [key: string]: unknown }[][] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (name.endsWith(".jsonl")) files.push(full);
      else if (!name.includes(".")) walk(full);
    }
  };
  if (existsSync(sessions)) walk(sessions);
  return files.map((f) =>
    readFileSync(f, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string }),
  );
}

type Scenario = [name: string, run: (s: Setup) => Promise<unknown>];
const SCENARIOS: Scenario[] = [
  [
    "get_state reports the model, idle, no messages",
    async ({ client }) => {
      const state = await client.getState();
      expect(state.model).toMatchObject({ provider: "offline", id: "echo" });
      expect(state.isStreaming).toBe(false);
      expect(state.messageCount).toBe(0);
      return { model: state.model?.id, messageCount: state.messageCount };
    },
  ],
  [
    "a prompt's messages are saved to the session file",
    async (s) => {
      const events = await s.client.promptAndWait("Reply with just 'hello'");
      expect(events.filter((e) => e.type === "message_end").length).toBeGreaterThanOrEqual(2);
      const [entries] = sessionEntries(s.sessions);
      expect(entries?.[0]?.type).toBe("session");
      const messages = (entries ?? []).filter((e) => e.type === "message").map((e) => e["message"] as { role: string });
      const roles = as073(s, messages, withoutSystemMessages).map((m) => m.role);
      expect(roles).toEqual(expect.arrayContaining(["user", "assistant"]));
      return roles;
    },
  ],
  [
    "manual compaction returns a summary and saves a compaction entry",
    async ({ client, sessions }) => {
      await client.promptAndWait("Say hello");
      const result = await client.compact();
      expect(result.summary).toBeTruthy();
      expect(result.tokensBefore).toBeGreaterThan(0);
      const compactions = (sessionEntries(sessions)[0] ?? []).filter((e) => e.type === "compaction");
      expect(compactions).toHaveLength(1);
      return result.summary;
    },
  ],
  [
    "bash runs a command",
    async ({ client }) => {
      const result = await client.bash("echo hello");
      expect(result).toMatchObject({ exitCode: 0, cancelled: false });
      expect(result.output.trim()).toBe("hello");
      return result;
    },
  ],
  [
    "bash output is saved as a bashExecution message",
    async ({ client, sessions }) => {
      await client.promptAndWait("Say hi");
      await client.bash("echo value-123");
      const bash = (sessionEntries(sessions)[0] ?? []).filter((e) => e.type === "message" && (e["message"] as { role: string }).role === "bashExecution");
      expect(bash).toHaveLength(1);
      expect(JSON.stringify(bash[0]?.["message"])).toContain("value-123");
      return bash.length;
    },
  ],
  [
    "bash output reaches the model's context",
    async ({ client }) => {
      await client.bash("echo unique-456");
      const events = await client.promptAndWait("What was the exact output of the echo command I just ran? Reply with just the value.");
      const reply = events.find((e) => e.type === "message_end" && e.message.role === "assistant");
      const text =
        reply?.type === "message_end" && reply.message.role === "assistant" ? reply.message.content.map((c) => (c.type === "text" ? c.text : "")).join("") : "";
      expect(text).toContain("unique-456");
      return text;
    },
  ],
  [
    "set_thinking_level, then get_state shows it",
    async ({ client }) => {
      await client.setThinkingLevel("high");
      expect((await client.getState()).thinkingLevel).toBe("high");
      return "high";
    },
  ],
  [
    "cycle_thinking_level moves to another level",
    async ({ client }) => {
      const before = (await client.getState()).thinkingLevel;
      const result = await client.cycleThinkingLevel();
      expect(result?.level).toBeDefined();
      expect(result?.level).not.toBe(before);
      expect((await client.getState()).thinkingLevel).toBe(result?.level);
      return [before, result?.level];
    },
  ],
  [
    "get_available_models lists complete models",
    async ({ client }) => {
      const models = await client.getAvailableModels();
      expectCompleteModels(models);
      return models.map((m) => `${m.provider}/${m.id}`);
    },
  ],
  [
    "get_session_stats after a prompt",
    async ({ client }) => {
      await client.promptAndWait("Hello");
      const stats = await client.getSessionStats();
      expect(stats.sessionFile).toBeTruthy();
      expect(stats.sessionId).toBeTruthy();
      expect(stats.userMessages).toBeGreaterThanOrEqual(1);
      expect(stats.assistantMessages).toBeGreaterThanOrEqual(1);
      return [stats.userMessages, stats.assistantMessages];
    },
  ],
  [
    "new_session clears the messages",
    async ({ client }) => {
      await client.promptAndWait("Hello");
      expect((await client.getState()).messageCount).toBeGreaterThan(0);
      await client.newSession();
      expect((await client.getState()).messageCount).toBe(0);
      return 0;
    },
  ],
  [
    "export_html writes an .html file",
    async ({ client, cwd }) => {
      await client.promptAndWait("Hello");
      const result = await client.exportHtml();
      expect(result.path.endsWith(".html")).toBe(true);
      // The path may be relative to the agent's working folder.
      expect(existsSync(resolve(cwd, result.path))).toBe(true);
      return true;
    },
  ],
  [
    "get_last_assistant_text: none at first, then the reply",
    async ({ client }) => {
      expect(await client.getLastAssistantText()).toBeUndefined();
      await client.promptAndWait("Reply with just: test123");
      const text = await client.getLastAssistantText();
      expect(text).toContain("test123");
      return text;
    },
  ],
  [
    "set_session_name shows in get_state and is saved",
    async ({ client, sessions }) => {
      expect((await client.getState()).sessionName).toBeUndefined();
      await client.promptAndWait("Reply with just 'ok'");
      await client.setSessionName("my-test-session");
      expect((await client.getState()).sessionName).toBe("my-test-session");
      const info = (sessionEntries(sessions)[0] ?? []).filter((e) => e.type === "session_info");
      expect(info).toHaveLength(1);
      expect(info[0]?.["name"]).toBe("my-test-session");
      return "my-test-session";
    },
  ],
];

describe("the scenarios of pi's RPC test file, against pi and parley", () => {
  for (const [name, run] of SCENARIOS) {
    it(name, async () => {
      const outcomes = await Promise.all(
        AGENTS.map(async (agent) => {
          const setup = await start(agent, "flags");
          return normalise(await run(setup), setup.base);
        }),
      );
      expect(outcomes[1]).toEqual(outcomes[0]);
    }, 120_000);
  }
});
