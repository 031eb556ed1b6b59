/**
 * Differential test of the agent loop: the same scripted model, the same prompts, against parley and
 * the reference pi 1.6.0 (the `pi-newest` devDependency, `pi --mode rpc` on the Node running the
 * tests), comparing the agent event sequences record by record.
 *
 * The scripted model: each scenario writes a small extension into a temp dir that registers pi-ai's
 * faux provider with a fixed script (deterministic tool call ids, fixed assistant timestamps, fixed
 * 2-token chunks so the deltas are identical) and hands its `streamSimple` to `pi.registerProvider`.
 * Both agents load the same file with `-e`, run with `--no-session`, a private HOME each, in the same
 * temp cwd, and are switched to the model with `set_model {provider:"faux", modelId:"scripted"}`.
 * Note: pi requires `baseUrl` and `apiKey` in a provider config that defines models (it refuses to
 * start without them); parley accepts the config without them. The extension passes both.
 *
 * Each scenario is a list of steps; a step sends one input and waits for its terminal record; the
 * records produced in each step are compared, in order, after normalisation.
 *
 * Always normalised (run-to-run noise, not behaviour): `sessionId`, uuids, each side's private HOME,
 * wall-clock `timestamp`s (user, toolResult and system messages, aborted assistant messages) → "<now>"
 * after checking that they lie within this test run, and every `durationMs` → "<ms>" after checking
 * it is a whole number of milliseconds (so where one is present is compared). The scripted assistant timestamps (1000, 2000,
 * …) are compared as they are. Everything else must be equal, except the places listed in
 * DIFFERENCES below, each applied only to the steps that name it, by its own normaliser that first
 * asserts that pi and parley each do exactly what the table says.
 *
 * Each step also lists records pi's transcript must contain (`expects`), so that a scenario in which
 * both agents fail the same way (e.g. the faux script running dry) does not pass vacuously.
 *
 * DIFF_DUMP=1 prints both normalised transcripts of every step.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnParley, spawnPiNewest, type AgentProcess, type Rec } from "./helpers/spawn.js";
import { EXIT, UiIds, collectStep, matchesShape, normaliseRecord, runInSlots, waitUntilServing, type Terminal } from "./helpers/transcript.js";

// ------------------------------------------------------------------------------------------------
// The documented differences. Each key has exactly one normaliser in NORMALISERS and is used by at
// least one step that passed it.
// ------------------------------------------------------------------------------------------------

interface Difference {
  key: string;
  where: string;
  pi: string;
  parley: string;
  why: string;
}

const DIFFERENCES = [
  {
    key: "system-prompt-text",
    where: "every system message (message_start/message_end, agent_end.messages, get_messages)",
    pi: "pi's own prompt in named sections (preamble, tools, rules, docs, cwd); its tools declared with pi's descriptions",
    parley: "parley's own prompt, whole in one `preamble` section; its tools declared with parley's descriptions",
    why: "parley writes its own prompt and tool prose (docs/compatibility.md: 'parley keeps its prompt whole in one preamble section'). Normalised: on each side every system message has empty content, a timestamp and string sections, which become a placeholder; each declared tool's descriptions are dropped and the rest (name, parameter structure, constrainedSampling, …) stays compared, as does where the system messages are",
  },
  {
    key: "prompt-dependent-tokens",
    where: "every `usage` object (message_start/end, message_update, turn_end, agent_end, get_messages)",
    pi: "input/cacheRead/cacheWrite/totalTokens estimated by the faux provider from pi's context (system prompt + tool schemas + messages)",
    parley: "the same estimate from parley's context; its system prompt and tool descriptions differ by design, so the input-side counts differ",
    why: "the faux model counts ceil(chars/4) of the serialised context. Normalised: totalTokens = input+output+cacheRead+cacheWrite asserted on each side, then input/cacheRead/cacheWrite/totalTokens → <prompt-dependent>; `output` and `cost` stay compared",
  },
  {
    key: "session-stats-tokens",
    where: "get_session_stats → data.tokens, data.contextUsage",
    pi: "token totals and context usage computed from pi's (prompt-dependent) usages",
    parley: "the same computation over parley's usages",
    why: "consequence of the row above. Normalised: on each side tokens.* = the sums over the assistant messages of the preceding get_messages, then the input-side sums → <prompt-dependent>; contextUsage.tokens is split into the last valid (not aborted) assistant usage's totalTokens → <prompt-dependent> and the estimate of the messages after it, which stays compared; percent → a placeholder only if it is exactly tokens/contextWindow·100. Message counts, output tokens, cost and contextWindow stay compared",
  },
  {
    key: "bash-update-chunking",
    where: "tool_execution_update of the bash tool",
    pi: "n ≥ 1 updates, one per output chunk as the child process flushes it (plus an initial empty one)",
    parley: "the same kind of updates; how many, and where the chunk boundaries fall, depends on pipe timing",
    why: "chunking of a child process's output is timing, not behaviour. Normalised: each side's updates for one call (all between its tool_execution_start and _end) must carry the call's toolCallId/toolName/args and accumulating text (each a prefix of the next and of the final result); the run collapses to one placeholder update",
  },
] as const satisfies readonly Difference[];

type DiffKey = (typeof DIFFERENCES)[number]["key"];
type Side = "pi" | "parley";

interface NormaliserContext {
  side: Side;
  /** This side's raw records of the earlier steps of the scenario. */
  history: Rec[];
}
type StepNormaliser = (records: Rec[], ctx: NormaliserContext) => Rec[];
type Normaliser = Record<Side, StepNormaliser>;

// --- building blocks ---

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
const obj = (v: unknown, what: string): Obj => {
  expect(isObj(v), `${what} is an object: ${JSON.stringify(v)}`).toBe(true);
  return v as Obj;
};

/** Applies `fn` bottom-up to every object inside `value` (arrays and keys kept). */
function mapObjects(value: unknown, fn: (o: Obj, key: string | undefined) => Obj, key?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => mapObjects(v, fn));
  if (!isObj(value)) return value;
  const mapped = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapObjects(v, fn, k)]));
  return fn(mapped, key);
}

const PROMPT_DEPENDENT = "<prompt-dependent>";
const USAGE_FIELDS = ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] as const;

function checkUsage(u: Obj, what: string): void {
  for (const f of USAGE_FIELDS) expect(typeof u[f], `${what}: usage.${f} is a number`).toBe("number");
  const n = (f: string): number => u[f] as number;
  expect(n("totalTokens"), `${what}: totalTokens = input+output+cacheRead+cacheWrite`).toBe(n("input") + n("output") + n("cacheRead") + n("cacheWrite"));
}

const isSystemMessage = (m: unknown): m is Obj => isObj(m) && m["role"] === "system";

/** A JSON schema without its `description`s (parley words its tools' descriptions itself). */
const withoutDescriptions = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema), (key, value) => (key === "description" ? undefined : value));

/**
 * A recorded system message as pi 1.6 writes it (no instructions of its own, the prompt in
 * sections, the tool declarations), with what parley words by design made comparable: the
 * sections' text and the tools' descriptions.
 */
function systemMessageShape(message: Obj, what: string): Obj {
  expect(message["content"], `${what}: a system message's content`).toBe("");
  expect(typeof message["timestamp"], `${what}: a system message's timestamp`).toBe("number");
  const out: Obj = { ...message };
  if (message["sections"] !== undefined) {
    const sections = obj(message["sections"], `${what}: sections`);
    for (const [name, text] of Object.entries(sections)) expect(typeof text, `${what}: section ${name}`).toBe("string");
    out["sections"] = "<the system prompt, in each side's words>";
  }
  if (message["toolsAdded"] !== undefined) {
    out["toolsAdded"] = (message["toolsAdded"] as unknown[]).map((t) => {
      const { description, parameters, ...rest } = obj(t, `${what}: a declared tool`);
      expect(typeof description, `${what}: ${String(rest["name"])}'s description`).toBe("string");
      return { ...rest, parameters: withoutDescriptions(parameters) };
    });
  }
  return out;
}

const NORMALISERS: Record<DiffKey, Normaliser> = {
  "system-prompt-text": ((): Normaliser => {
    const normalise: StepNormaliser = (records, { side }) =>
      records.map((r) => mapObjects(r, (o) => (isSystemMessage(o) ? systemMessageShape(o, `${side} ${r.type}`) : o)) as Rec);
    return { pi: normalise, parley: normalise };
  })(),
  "prompt-dependent-tokens": ((): Normaliser => {
    const normalise: StepNormaliser = (records, { side }) =>
      records.map(
        (r) =>
          mapObjects(r, (o, key) => {
            if (key !== "usage") return o;
            checkUsage(o, `${side} ${r.type}`);
            return { ...o, input: PROMPT_DEPENDENT, cacheRead: PROMPT_DEPENDENT, cacheWrite: PROMPT_DEPENDENT, totalTokens: PROMPT_DEPENDENT };
          }) as Rec,
      );
    return { pi: normalise, parley: normalise };
  })(),
  "session-stats-tokens": ((): Normaliser => {
    const normalise: StepNormaliser = (records, { side, history }) =>
      records.map((r) => {
        if (r.type !== "response" || r["command"] !== "get_session_stats") return r;
        const data = obj(r["data"], "get_session_stats data");
        const lastMessages = [...history].reverse().find((h) => h.type === "response" && h["command"] === "get_messages");
        expect(lastMessages, `${side}: get_session_stats is preceded by get_messages`).toBeDefined();
        const assistants = (obj(lastMessages!["data"], "get_messages data")["messages"] as Obj[]).filter((m) => m["role"] === "assistant");
        const usages = assistants.map((m) => obj(m["usage"], "assistant usage"));
        const sum = (f: string): number => usages.reduce((s, u) => s + (u[f] as number), 0);
        const tokens = obj(data["tokens"], "tokens");
        expect(tokens, `${side}: tokens = the sums over the assistant messages`).toEqual({
          input: sum("input"),
          output: sum("output"),
          cacheRead: sum("cacheRead"),
          cacheWrite: sum("cacheWrite"),
          total: sum("totalTokens"),
        });
        // contextUsage: the last valid (not aborted/error) assistant usage, which is prompt-dependent,
        // plus an estimate of the messages after it, which is not; percent = tokens/contextWindow·100.
        const context = obj(data["contextUsage"], "contextUsage");
        const messages = obj(lastMessages!["data"], "get_messages data")["messages"] as Obj[];
        const valid = messages.filter((m) => m["role"] === "assistant" && m["stopReason"] !== "aborted" && m["stopReason"] !== "error");
        const lastValid = valid.length > 0 ? obj(valid.at(-1)!["usage"], "usage")["totalTokens"] : undefined;
        const contextTokens = context["tokens"];
        // null (pi: unknown right after a compaction) is compared as it is.
        if (typeof contextTokens !== "number")
          return {
            ...r,
            data: {
              ...data,
              tokens: { ...tokens, input: PROMPT_DEPENDENT, cacheRead: PROMPT_DEPENDENT, cacheWrite: PROMPT_DEPENDENT, total: PROMPT_DEPENDENT },
            },
          };
        const exact = (contextTokens / (context["contextWindow"] as number)) * 100;
        return {
          ...r,
          data: {
            ...data,
            tokens: { ...tokens, input: PROMPT_DEPENDENT, cacheRead: PROMPT_DEPENDENT, cacheWrite: PROMPT_DEPENDENT, total: PROMPT_DEPENDENT },
            contextUsage: {
              ...context,
              tokens: lastValid === undefined ? contextTokens : { lastUsage: PROMPT_DEPENDENT, trailingEstimate: contextTokens - (lastValid as number) },
              // Kept as sent unless it is exactly tokens/contextWindow·100 (what pi sends), so a rounded value shows in the diff.
              percent: context["percent"] === exact ? "<tokens/contextWindow·100>" : context["percent"],
            },
          },
        };
      });
    return { pi: normalise, parley: normalise };
  })(),
  "bash-update-chunking": ((): Normaliser => {
    const text = (result: unknown): string =>
      ((obj(result, "tool result")["content"] as Obj[] | undefined) ?? []).map((c) => (c["type"] === "text" ? String(c["text"]) : "")).join("");
    const normalise: StepNormaliser = (records, { side }) => {
      const out: Rec[] = [];
      for (let i = 0; i < records.length; i++) {
        const r = records[i]!;
        if (r.type === "tool_execution_update") {
          expect.fail(`${side}: tool_execution_update outside a start/end pair: ${JSON.stringify(r)}`);
        }
        out.push(r);
        if (r.type !== "tool_execution_start" || r["toolName"] !== "bash") continue;
        const call = { toolCallId: r["toolCallId"], toolName: r["toolName"], args: r["args"] };
        const endAt = records.findIndex((e, j) => j > i && e.type === "tool_execution_end" && e["toolCallId"] === call.toolCallId);
        expect(endAt, `${side}: tool_execution_end for ${String(call.toolCallId)} in this step`).toBeGreaterThan(i);
        const between = records.slice(i + 1, endAt);
        const texts = between.map((u) => {
          expect(u, `${side}: only updates of this call between its start and end`).toMatchObject({ type: "tool_execution_update", ...call });
          return text(u["partialResult"]);
        });
        const final = text(records[endAt]!["result"]);
        [...texts, final].reduce((prev, next) => {
          expect(next.startsWith(prev), `${side}: update text accumulates (${JSON.stringify(prev)} → ${JSON.stringify(next)})`).toBe(true);
          return next;
        });
        if (between.length > 0) out.push({ type: "tool_execution_update", ...call, partialResult: "<accumulating prefixes of the result>" });
        i = endAt - 1;
      }
      return out;
    };
    return { pi: normalise, parley: normalise };
  })(),
};

/** The differences every step that runs the agent needs, in the order they must be applied. */
const AGENT_RUN: DiffKey[] = ["system-prompt-text", "prompt-dependent-tokens"];

// ------------------------------------------------------------------------------------------------
// The scripted model (an extension written per scenario)
// ------------------------------------------------------------------------------------------------

interface FauxOptions {
  /**
   * Model calls (1-based) whose reply stops after its first delta until the test releases it (a
   * step's `release`) or the call is aborted: commands sent meanwhile meet a reply that is still
   * streaming, however slow the machine.
   */
  holdCalls?: number[];
  /** TS source: the elements of the faux response array (messages or factories of the context). */
  responses: string;
  /** TS source appended to the extension's body (`pi` is the ExtensionAPI). */
  extra?: string;
}

function fauxExtension({ holdCalls = [], responses, extra = "" }: FauxOptions): string {
  return `import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerFauxProvider, fauxAssistantMessage, fauxText, fauxToolCall, getApiProvider, createAssistantMessageEventStream } from "@earendil-works/pi-ai";

// Held calls: after the first delta, the rest waits until the test creates $HOME/release-<call>
// (each side has its own HOME), or the request is aborted, which ends the reply as faux's own abort does.
const HOLD_CALLS: number[] = ${JSON.stringify(holdCalls)};
let calls = 0;
const released = (call: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => {
    const check = (): void => {
      if (signal?.aborted || existsSync(join(process.env.HOME ?? "", \`release-\${call}\`))) resolve();
      else setTimeout(check, 10);
    };
    check();
  });
const holding = (inner: any, call: number, signal: AbortSignal | undefined): any => {
  // Each event as faux pushes it: faux runs ahead while this holds, filling in its partial message.
  const push = inner.push.bind(inner);
  inner.push = (event: any) => push(structuredClone(event));
  const outer = createAssistantMessageEventStream();
  void (async () => {
    let held = false;
    let partial: any;
    for await (const event of inner) {
      if (held === false && event.type === "text_delta") {
        outer.push(event);
        partial = event.partial;
        held = true;
        await released(call, signal);
        if (signal?.aborted) {
          const aborted = { ...partial, stopReason: "aborted", errorMessage: "Request was aborted", timestamp: Date.now() };
          outer.push({ type: "error", reason: "aborted", error: aborted });
          outer.end(aborted);
          return;
        }
        continue;
      }
      outer.push(event);
    }
    outer.end(await inner.result());
  })();
  return outer;
};

// What the model saw: roles of the context (u/a/t), user texts, and the last tool result.
// pi 1.6 hands the provider its system prompt as a leading system message (parley too): not listed.
const roles = (context: any): string => context.messages.filter((m: any) => m.role !== "system").map((m: any) => (m.role === "toolResult" ? "t" : m.role[0])).join(",");
const texts = (content: any): string => (typeof content === "string" ? content : content.filter((c: any) => c.type === "text").map((c: any) => c.text).join(""));
const userTexts = (context: any): string => context.messages.filter((m: any) => m.role === "user").map((m: any) => texts(m.content)).join(" | ");
const lastToolResult = (context: any): string => {
  const m = [...context.messages].reverse().find((m: any) => m.role === "toolResult");
  return m ? JSON.stringify({ toolName: m.toolName, isError: m.isError, text: texts(m.content) }) : "none";
};

export default function (pi: ExtensionAPI) {
  const faux = registerFauxProvider({
    api: "faux-diff",
    provider: "faux",
    models: [{ id: "scripted" }],
    tokenSize: { min: 2, max: 2 },
  });
  faux.setResponses([
${responses}
  ]);
  const model = faux.getModel();
  // Taken now: registering the provider below puts the wrapper in its place.
  const fauxStream = getApiProvider(model.api as any)!.streamSimple;
  pi.registerProvider("faux", {
    baseUrl: "http://localhost:0",
    apiKey: "faux-needs-no-key",
    api: model.api as any,
    streamSimple: ((m: any, context: any, options: any) => {
      const call = ++calls;
      const inner = fauxStream(m, context, options);
      return HOLD_CALLS.includes(call) ? holding(inner, call, options?.signal) : inner;
    }) as any,
    models: [{ id: "scripted", name: "Scripted", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100000, maxTokens: 1000 }],
  });
${extra}
}
`;
}

// ------------------------------------------------------------------------------------------------
// Scenarios
// ------------------------------------------------------------------------------------------------

/** When a step is over: the first record matching `match`, `quiet` ms of waiting, or process exit. */
type Input = { json: Record<string, unknown> } | { eof: true };
interface Step {
  name: string;
  input?: Input;
  /** A held model call (FauxOptions.holdCalls) to let go on, before the input is sent. */
  release?: number;
  until: Terminal | { pi: Terminal; parley: Terminal };
  diffs?: DiffKey[];
  /** Shapes that must occur, in this order, in pi's normalised records (guards against vacuous passes). */
  expects?: object[];
}
interface Scenario {
  name: string;
  extension: FauxOptions;
  files?: Record<string, string>;
  steps: Step[];
  /** Checks on the shared cwd after the run. */
  after?: (cwd: string) => void;
}

const json = (record: Record<string, unknown>): Input => ({ json: record });
const untilResponse = (command: string): Terminal => ({ match: { type: "response", command } });
const UNTIL_IDLE: Terminal = { match: { type: "agent_settled" } };
const UNTIL_TEXT_DELTA: Terminal = { match: { type: "message_update", assistantMessageEvent: { type: "text_delta" } } };

const setModel: Step = {
  name: "set_model faux/scripted",
  input: json({ type: "set_model", provider: "faux", modelId: "scripted", id: "model" }),
  until: untilResponse("set_model"),
  expects: [{ type: "response", command: "set_model", success: true, data: { provider: "faux", id: "scripted", api: "faux-diff" } }],
};
const prompt = (message: string, id: string, expects: object[], extra: Partial<Step> = {}): Step => ({
  name: `prompt ${JSON.stringify(message)}`,
  input: json({ type: "prompt", message, id }),
  until: UNTIL_IDLE,
  diffs: AGENT_RUN,
  expects: [{ type: "response", command: "prompt", id, success: true }, { type: "agent_start" }, ...expects, { type: "agent_end" }],
  ...extra,
});
const EOF_STEP: Step = { name: "stdin EOF: exits 0", input: { eof: true }, until: { exit: true }, expects: [{ type: EXIT, code: 0 }] };

const assistantEnd = (text: string, stopReason = "stop"): object => ({
  type: "message_end",
  message: { role: "assistant", content: [{ type: "text", text }], stopReason },
});
const toolResultEnd = (toolName: string, text: string, isError = false): object => ({
  type: "message_end",
  message: { role: "toolResult", toolName, isError, content: [{ type: "text", text }] },
});

const SCENARIOS: Scenario[] = [
  {
    name: "slow stream: follow-up while streaming, then abort",
    extension: {
      holdCalls: [1, 3, 5], // each waits after its first delta for the steps below
      responses: `
    fauxAssistantMessage("Slow, but complete.", { timestamp: 1000 }),
    (context: any) => fauxAssistantMessage("saw " + roles(context), { timestamp: 2000 }),
    fauxAssistantMessage("This long reply is aborted after its first delta. ".repeat(4), { timestamp: 3000 }),
    (context: any) => fauxAssistantMessage("saw " + roles(context), { timestamp: 4000 }),
    fauxAssistantMessage("About to be steered.", { timestamp: 5000 }),
    (context: any) => fauxAssistantMessage("steered: " + userTexts(context).split(" | ").slice(-2).join(" + "), { timestamp: 6000 }),`,
    },
    steps: [
      setModel,
      {
        name: "prompt: streaming starts",
        input: json({ type: "prompt", message: "go slowly", id: "p1" }),
        until: UNTIL_TEXT_DELTA,
        diffs: AGENT_RUN,
        expects: [
          { type: "response", command: "prompt", id: "p1" },
          { type: "agent_start" },
          { type: "message_update", assistantMessageEvent: { type: "text_delta", delta: "Slow, bu" } },
        ],
      },
      {
        name: "follow_up while streaming: queued",
        input: json({ type: "follow_up", message: "and then?", id: "f1" }),
        until: untilResponse("follow_up"),
        expects: [
          { type: "queue_update", steering: [], followUp: ["and then?"] },
          { type: "response", command: "follow_up", success: true },
        ],
      },
      {
        name: "the reply completes, then the follow-up runs as a second turn",
        release: 1,
        until: UNTIL_IDLE,
        diffs: AGENT_RUN,
        expects: [
          assistantEnd("Slow, but complete."),
          { type: "turn_end" },
          { type: "turn_start" },
          { type: "queue_update", steering: [], followUp: [] },
          { type: "message_end", message: { role: "user", content: [{ type: "text", text: "and then?" }] } },
          assistantEnd("saw u,a,u"),
          { type: "agent_end" },
        ],
      },
      {
        name: "prompt: a long reply starts",
        input: json({ type: "prompt", message: "say a lot", id: "p2" }),
        until: UNTIL_TEXT_DELTA,
        diffs: AGENT_RUN,
        expects: [{ type: "message_update", assistantMessageEvent: { type: "text_delta" } }],
      },
      {
        name: "abort: the reply ends as aborted",
        input: json({ type: "abort", id: "a1" }),
        until: untilResponse("abort"),
        diffs: AGENT_RUN,
        expects: [
          {
            type: "message_end",
            message: { role: "assistant", stopReason: "aborted", errorMessage: "Request was aborted", content: [{ type: "text", text: "This lon" }] },
          },
          { type: "turn_end" },
          { type: "agent_end" },
          { type: "response", command: "abort", success: true },
        ],
      },
      {
        name: "get_messages after the abort",
        input: json({ type: "get_messages", id: "gm" }),
        until: untilResponse("get_messages"),
        diffs: ["system-prompt-text", "prompt-dependent-tokens"],
        expects: [{ type: "response", command: "get_messages", success: true }],
      },
      {
        name: "get_last_assistant_text after the abort",
        input: json({ type: "get_last_assistant_text", id: "gl" }),
        until: untilResponse("get_last_assistant_text"),
        expects: [{ type: "response", command: "get_last_assistant_text", success: true }],
      },
      {
        name: "get_session_stats after the abort (messages trail the last valid usage)",
        input: json({ type: "get_session_stats", id: "gs" }),
        until: untilResponse("get_session_stats"),
        diffs: ["session-stats-tokens"],
        expects: [{ type: "response", data: { userMessages: 3, assistantMessages: 3, totalMessages: 7 } }], // the system message counts
      },
      prompt("after the abort", "p3", [assistantEnd("saw u,a,u,a,u,a,u")]),
      {
        name: "prompt: another slow reply starts",
        input: json({ type: "prompt", message: "steer me", id: "p4" }),
        until: UNTIL_TEXT_DELTA,
        diffs: AGENT_RUN,
        expects: [{ type: "message_update", assistantMessageEvent: { type: "text_delta" } }],
      },
      {
        name: "steer while streaming: queued",
        input: json({ type: "steer", message: "change course", id: "s1" }),
        until: untilResponse("steer"),
        expects: [
          { type: "queue_update", steering: ["change course"], followUp: [] },
          { type: "response", command: "steer", success: true },
        ],
      },
      {
        name: "the reply completes, then the steering message runs as a second turn",
        release: 5,
        until: UNTIL_IDLE,
        diffs: AGENT_RUN,
        expects: [
          assistantEnd("About to be steered."),
          { type: "turn_start" },
          { type: "queue_update", steering: [], followUp: [] },
          { type: "message_end", message: { role: "user", content: [{ type: "text", text: "change course" }] } },
          assistantEnd("steered: steer me + change course"),
          { type: "agent_end" },
        ],
      },
      EOF_STEP,
    ],
  },
  {
    name: "abort with a follow-up and a steer queued: they stay queued for the next prompt",
    extension: {
      holdCalls: [1],
      responses: `
    fauxAssistantMessage("This long reply is aborted after its first delta. ".repeat(4), { timestamp: 1000 }),
    (context: any) => fauxAssistantMessage("next saw " + userTexts(context), { timestamp: 2000 }),
    (context: any) => fauxAssistantMessage("then saw " + userTexts(context), { timestamp: 3000 }),
    (context: any) => fauxAssistantMessage("last saw " + userTexts(context), { timestamp: 4000 }),`,
    },
    steps: [
      setModel,
      {
        name: "prompt: a long reply starts",
        input: json({ type: "prompt", message: "say a lot", id: "p1" }),
        until: UNTIL_TEXT_DELTA,
        diffs: AGENT_RUN,
        expects: [{ type: "response", command: "prompt", id: "p1" }, { type: "agent_start" }],
      },
      {
        name: "follow_up while streaming: queued",
        input: json({ type: "follow_up", message: "queued follow-up", id: "f1" }),
        until: untilResponse("follow_up"),
        expects: [
          { type: "queue_update", steering: [], followUp: ["queued follow-up"] },
          { type: "response", command: "follow_up", success: true },
        ],
      },
      {
        name: "steer while streaming: queued",
        input: json({ type: "steer", message: "queued steer", id: "s1" }),
        until: untilResponse("steer"),
        expects: [
          { type: "queue_update", steering: ["queued steer"], followUp: ["queued follow-up"] },
          { type: "response", command: "steer", success: true },
        ],
      },
      {
        name: "abort: the reply ends as aborted",
        input: json({ type: "abort", id: "a1" }),
        until: untilResponse("abort"),
        diffs: AGENT_RUN,
        expects: [
          { type: "message_end", message: { role: "assistant", stopReason: "aborted" } },
          { type: "agent_end" },
          { type: "response", command: "abort", success: true },
        ],
      },
      // The steer joins the prompt's first model call; the follow-up runs as the next turn.
      prompt("next", "p2", [
        { type: "message_end", message: { role: "user", content: [{ type: "text", text: "next" }] } },
        { type: "queue_update", steering: [], followUp: ["queued follow-up"] },
        { type: "message_end", message: { role: "user", content: [{ type: "text", text: "queued steer" }] } },
        assistantEnd("next saw say a lot | next | queued steer"),
        { type: "queue_update", steering: [], followUp: [] },
        { type: "message_end", message: { role: "user", content: [{ type: "text", text: "queued follow-up" }] } },
        assistantEnd("then saw say a lot | next | queued steer | queued follow-up"),
      ]),
      EOF_STEP,
    ],
  },
  {
    name: "conversation: text, read tool, context, queries",
    files: { "notes.txt": "remember the milk\n" },
    extension: {
      responses: `
    fauxAssistantMessage("Hello! I am the scripted model.", { timestamp: 1000 }),
    fauxAssistantMessage([fauxText("Let me read it."), fauxToolCall("read", { path: "notes.txt" }, { id: "call-read-1" })], { stopReason: "toolUse", timestamp: 2000 }),
    (context: any) => fauxAssistantMessage("The tool said " + lastToolResult(context), { timestamp: 3000 }),
    (context: any) => fauxAssistantMessage("saw " + roles(context) + "; you said: " + userTexts(context), { timestamp: 4000 }),`,
    },
    steps: [
      setModel,
      {
        name: "get_messages (empty session)",
        input: json({ type: "get_messages", id: "gm0" }),
        until: untilResponse("get_messages"),
        expects: [{ type: "response", command: "get_messages", success: true, data: { messages: [] } }],
      },
      {
        name: "get_session_stats (empty session: no usage yet)",
        input: json({ type: "get_session_stats", id: "gs0" }),
        until: untilResponse("get_session_stats"),
        diffs: ["session-stats-tokens"],
        expects: [{ type: "response", data: { userMessages: 0, assistantMessages: 0, totalMessages: 0 } }],
      },
      prompt("hello", "p1", [{ type: "turn_start" }, assistantEnd("Hello! I am the scripted model."), { type: "turn_end" }]),
      prompt("read notes.txt", "p2", [
        { type: "turn_start" },
        { type: "message_update", assistantMessageEvent: { type: "toolcall_start", contentIndex: 1 } },
        { type: "message_end", message: { role: "assistant", stopReason: "toolUse" } },
        { type: "tool_execution_start", toolCallId: "call-read-1", toolName: "read", args: { path: "notes.txt" } },
        { type: "tool_execution_end", toolCallId: "call-read-1", isError: false },
        toolResultEnd("read", "remember the milk\n"),
        { type: "turn_end", toolResults: [{ role: "toolResult", toolCallId: "call-read-1" }] },
        { type: "turn_start" },
        assistantEnd('The tool said {"toolName":"read","isError":false,"text":"remember the milk\\n"}'),
        { type: "turn_end" },
      ]),
      prompt("what did we do?", "p3", [assistantEnd("saw u,a,u,a,t,a,u; you said: hello | read notes.txt | what did we do?")]),
      {
        name: "get_messages",
        input: json({ type: "get_messages", id: "gm" }),
        until: untilResponse("get_messages"),
        diffs: ["system-prompt-text", "prompt-dependent-tokens"],
        expects: [{ type: "response", command: "get_messages", success: true }],
      },
      {
        name: "get_last_assistant_text",
        input: json({ type: "get_last_assistant_text", id: "gl" }),
        until: untilResponse("get_last_assistant_text"),
        expects: [{ type: "response", data: { text: "saw u,a,u,a,t,a,u; you said: hello | read notes.txt | what did we do?" } }],
      },
      {
        name: "get_session_stats",
        input: json({ type: "get_session_stats", id: "gs" }),
        until: untilResponse("get_session_stats"),
        diffs: ["session-stats-tokens"],
        expects: [{ type: "response", data: { userMessages: 3, assistantMessages: 4, toolCalls: 1, toolResults: 1, totalMessages: 9 } }], // the system message counts
      },
      EOF_STEP,
    ],
  },
  {
    name: "bash tool, then a bash call blocked by a tool_call handler",
    extension: {
      responses: `
    fauxAssistantMessage([fauxToolCall("bash", { command: "echo hi; sleep 0.1; echo there" }, { id: "call-bash-1" })], { stopReason: "toolUse", timestamp: 1000 }),
    (context: any) => fauxAssistantMessage("bash said " + lastToolResult(context), { timestamp: 2000 }),
    fauxAssistantMessage([fauxText("Trying again."), fauxToolCall("bash", { command: "echo ran > ran.txt" }, { id: "call-bash-2" })], { stopReason: "toolUse", timestamp: 3000 }),
    (context: any) => fauxAssistantMessage("bash said " + lastToolResult(context), { timestamp: 4000 }),`,
      extra: `
  let blocking = false;
  pi.registerCommand("block-bash", { description: "block bash from now on", handler: async () => { blocking = true; } });
  pi.on("tool_call", async (event) => (blocking && event.toolName === "bash" ? { block: true, reason: "bash is blocked by the test" } : undefined));`,
    },
    steps: [
      setModel,
      prompt(
        "run echo",
        "p1",
        [
          { type: "tool_execution_start", toolCallId: "call-bash-1", toolName: "bash" },
          { type: "tool_execution_update", toolCallId: "call-bash-1" },
          { type: "tool_execution_end", toolCallId: "call-bash-1", isError: false, result: { content: [{ type: "text", text: "hi\nthere\n" }] } },
          toolResultEnd("bash", "hi\nthere\n"),
          assistantEnd('bash said {"toolName":"bash","isError":false,"text":"hi\\nthere\\n"}'),
        ],
        { diffs: [...AGENT_RUN, "bash-update-chunking"] },
      ),
      {
        name: "/block-bash",
        input: json({ type: "prompt", message: "/block-bash", id: "b" }),
        until: untilResponse("prompt"),
        expects: [{ type: "response", command: "prompt", success: true }],
      },
      prompt(
        "run it again",
        "p2",
        [
          { type: "tool_execution_start", toolCallId: "call-bash-2", toolName: "bash" },
          {
            type: "tool_execution_end",
            toolCallId: "call-bash-2",
            isError: true,
            result: { content: [{ type: "text", text: "bash is blocked by the test" }] },
          },
          toolResultEnd("bash", "bash is blocked by the test", true),
          assistantEnd('bash said {"toolName":"bash","isError":true,"text":"bash is blocked by the test"}'),
        ],
        { diffs: [...AGENT_RUN, "bash-update-chunking"] },
      ),
      EOF_STEP,
    ],
    after: (cwd) => expect(existsSync(join(cwd, "ran.txt")), "the blocked command did not run").toBe(false),
  },
];

// ------------------------------------------------------------------------------------------------
// Runner
// ------------------------------------------------------------------------------------------------

interface StepResult {
  pi?: Rec[];
  parley?: Rec[];
  error?: unknown;
}
interface ScenarioResult {
  steps: StepResult[];
  agents: Record<Side, AgentProcess>;
  cwd: string;
}

const T0 = Date.now();
const alive = new Set<AgentProcess>();
const tempDirs: string[] = [];
const tempDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
};
const used = new Set<DiffKey>();

/** A wall-clock timestamp of this run → "<now>"; scripted ones (small numbers) stay. */
function normaliseTimestamps(record: Rec): Rec {
  return mapObjects(record, (o) => {
    const t = o["timestamp"];
    if (typeof t !== "number" || t < 1e12) return o;
    expect(t, `timestamp ${t} lies within this test run`).toBeGreaterThanOrEqual(T0 - 1000);
    expect(t).toBeLessThanOrEqual(Date.now() + 1000);
    return { ...o, timestamp: "<now>" };
  }) as Rec;
}

class SideRun {
  readonly ids = new UiIds();
  cursor = 0;
  exit: { code: number | null } | undefined;
  constructor(
    readonly side: Side,
    readonly agent: AgentProcess,
    readonly home: string,
  ) {
    void agent.exited.then(({ code }) => (this.exit = { code }));
  }

  send(input: Input): void {
    if ("eof" in input) return this.agent.closeInput();
    this.agent.send(input.json);
  }

  async collect(until: Terminal): Promise<Rec[]> {
    const { records, end } = await collectStep(this.side, this.agent, () => this.exit, this.cursor, until);
    this.cursor = end;
    return records;
  }

  normalise(step: Step, raw: Rec[], history: Rec[]): Rec[] {
    let records = raw;
    for (const key of step.diffs ?? []) records = NORMALISERS[key][this.side](records, { side: this.side, history });
    return records.map((r) => normaliseTimestamps(normaliseRecord(r, { ids: this.ids, paths: [[this.home, "<home>"]], newestPi: true })));
  }
}

function spawnSide(side: Side, cwd: string, extension: string): SideRun {
  const home = tempDir(`parley-diffagent-${side}-home-`);
  const options = { cwd, env: { HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent") } };
  const args = ["-e", extension];
  const agent = side === "pi" ? spawnPiNewest(args, options) : spawnParley(args, options);
  alive.add(agent);
  void agent.exited.then(() => alive.delete(agent));
  return new SideRun(side, agent, home);
}

/** True if `shapes` occur in `records` in this order (each a subset match, gaps allowed). */
function containsInOrder(records: Rec[], shapes: object[]): { ok: true } | { ok: false; missing: object } {
  let at = 0;
  for (const shape of shapes) {
    const i = records.findIndex((r, j) => j >= at && matchesShape(r, shape));
    if (i < 0) return { ok: false, missing: shape };
    at = i + 1;
  }
  return { ok: true };
}

async function runScenario(scenario: Scenario): Promise<ScenarioResult> {
  const cwd = tempDir("parley-diffagent-cwd-");
  for (const [name, content] of Object.entries(scenario.files ?? {})) writeFileSync(join(cwd, name), content);
  const extDir = tempDir("parley-diffagent-ext-");
  const extension = join(extDir, "scripted-model.ts");
  writeFileSync(extension, fauxExtension(scenario.extension));

  const runs = { pi: spawnSide("pi", cwd, extension), parley: spawnSide("parley", cwd, extension) };
  await Promise.all([waitUntilServing(runs.pi.agent), waitUntilServing(runs.parley.agent)]);
  const history: Record<Side, Rec[]> = { pi: [], parley: [] };
  const steps: StepResult[] = [];
  let broken: unknown;
  for (const step of scenario.steps) {
    if (broken !== undefined) {
      steps.push({ error: new Error(`not run: an earlier step could not be driven (${String(broken)})`) });
      continue;
    }
    const result: StepResult = {};
    try {
      const [piRaw, parleyRaw] = await Promise.all(
        (["pi", "parley"] as const).map(async (side) => {
          const run = runs[side];
          if (step.release !== undefined) writeFileSync(join(run.home, `release-${step.release}`), "");
          if (step.input) run.send(step.input);
          return run.collect("pi" in step.until ? step.until[side] : step.until);
        }),
      );
      try {
        result.pi = runs.pi.normalise(step, piRaw!, history.pi);
        result.parley = runs.parley.normalise(step, parleyRaw!, history.parley);
        for (const key of step.diffs ?? []) used.add(key);
      } catch (error) {
        result.error = error;
        result.pi ??= piRaw;
        result.parley ??= parleyRaw;
      }
      history.pi.push(...piRaw!);
      history.parley.push(...parleyRaw!);
    } catch (error) {
      broken = error;
      result.error = error;
    }
    steps.push(result);
  }
  return { steps, agents: { pi: runs.pi.agent, parley: runs.parley.agent }, cwd };
}

// ------------------------------------------------------------------------------------------------
// Tests
// ------------------------------------------------------------------------------------------------

let results: Map<string, Promise<ScenarioResult>>;

beforeAll(() => {
  results = runInSlots(SCENARIOS, runScenario);
});

afterAll(async () => {
  const running = [...alive];
  for (const agent of running) agent.kill();
  await Promise.all(running.map((agent) => agent.exited));
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe("differential (agent loop, scripted faux model): parley vs pi 1.6.0", () => {
  for (const scenario of SCENARIOS) {
    describe(scenario.name, () => {
      scenario.steps.forEach((step, i) => {
        it(`${i + 1}. ${step.name}`, async () => {
          const { steps } = await results.get(scenario.name)!;
          const result = steps[i]!;
          if (process.env["DIFF_DUMP"])
            console.log(`## ${scenario.name} / ${step.name}\npi:     ${JSON.stringify(result.pi)}\nparley: ${JSON.stringify(result.parley)}`);
          if (result.error !== undefined) throw result.error;
          const found = containsInOrder(result.pi!, step.expects ?? []);
          expect(found, `pi's transcript lacks an expected record: ${JSON.stringify(result.pi)}`).toEqual({ ok: true });
          expect(result.parley, "parley's normalised records (expected: pi's)").toEqual(result.pi);
        });
      });
      it("stdout carried only JSON object lines; the cwd checks hold", async () => {
        const { agents, cwd } = await results.get(scenario.name)!;
        expect(agents.pi.garbage).toEqual([]);
        expect(agents.parley.garbage).toEqual([]);
        scenario.after?.(cwd);
      });
    });
  }

  it("every documented difference is exercised by a step that passed its normaliser", async () => {
    await Promise.all(results.values());
    expect(DIFFERENCES.map((d) => d.key).filter((k) => !used.has(k))).toEqual([]);
  });
});
