/**
 * The class of issue 34's hung handlers: whichever hook (or command) an extension's handler hangs
 * in, for ever and ignoring its signal, an abort or a shutdown ends what waits on it within the
 * abort grace: the command that started it is answered, and after an abort the agent is usable
 * (idle, not compacting, a prompt runs to its end, new_session is answered). fast-check picks the
 * hook and the way out; `npm run fuzz -- --hung-hooks` runs many more (HUNG_HOOK_RUNS).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { serveScripted } from "./helpers/in-process.js";
import type { ExtensionAPI } from "../src/index.js";

type Trigger = "run" | "compact" | "switch" | "bash" | "command";

/** The hook, and the command that makes parley wait on it. */
const HOOKS: [string, Trigger][] = [
  ["input", "run"],
  ["before_agent_start", "run"],
  ["agent_start", "run"],
  ["turn_start", "run"],
  ["context", "run"],
  ["context_with_system", "run"],
  ["message_start", "run"],
  ["message_update", "run"],
  ["message_end", "run"],
  ["tool_call", "run"],
  ["tool_execution_start", "run"],
  ["tool_execution_end", "run"],
  ["tool_result", "run"],
  ["turn_end", "run"],
  ["agent_end", "run"],
  ["session_before_compact", "compact"],
  ["session_compact", "compact"],
  ["session_before_switch", "switch"],
  ["session_shutdown", "switch"],
  ["session_start", "switch"],
  ["user_bash", "bash"],
  ["/hang", "command"],
];

const RUNS = Number(process.env["HUNG_HOOK_RUNS"] ?? "8");
const TOOL_TURN = { toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] };

async function hangIn(hook: string, trigger: Trigger, exit: "abort" | "shutdown"): Promise<void> {
  // Hangs the first time only (across the instances a session switch loads), so the agent can be used after.
  // Armed once the server has started: start-up's own session_start and resources_discover are not the case here.
  const hung = { armed: false, entered: false };
  const hang = async (): Promise<void> => {
    if (hung.entered || !hung.armed) return;
    hung.entered = true;
    await new Promise<never>(() => {});
  };
  const factory = (pi: ExtensionAPI): void => {
    if (hook === "/hang") pi.registerCommand("hang", { handler: hang });
    else pi.on(hook as "input", hang);
  };
  const turns = trigger === "run" ? [TOOL_TURN, "done", "r1", "r2", "r3"] : ["r0", "a summary", "r1", "r2", "r3"];
  // A one-token budget: "warm up" alone is something to compact (pi 1.6 refuses a session that fits it).
  const agent = await serveScripted(turns, [factory], { shutdownGraceMs: 60_000, agentConfig: { compaction: { keepRecentTokens: 1 } } });
  hung.armed = true;
  const settledCount = () => agent.transport.of("agent_settled").length;
  if (trigger === "compact") await agent.prompt("warm up");
  const before = settledCount();
  const command =
    trigger === "run" || trigger === "command"
      ? { type: "prompt", message: trigger === "command" ? "/hang" : "go" }
      : trigger === "compact"
        ? { type: "compact" }
        : trigger === "switch"
          ? { type: "new_session" }
          : { type: "bash", command: "echo hi" };
  const id = agent.send(command);
  await agent
    .until(() => hung.entered)
    .catch((error: unknown) => {
      throw new Error(`${hook}: ${String(error)}`);
    });
  if (exit === "shutdown") {
    const closed = agent.server.shutdown();
    expect((await agent.response(id))["type"]).toBe("response");
    await closed;
    return;
  }
  expect(await agent.request({ type: "abort" })).toMatchObject({ success: true });
  const answer = await agent.response(id);
  // A prompt that started a run: the run settles (one aborted while being prepared never started).
  if (trigger === "run" && answer["success"] === true) await agent.until(() => settledCount() > before);
  const state = (await agent.request({ type: "get_state" }))["data"];
  expect(state).toMatchObject({ isStreaming: false, isCompacting: false });
  expect(await agent.prompt("again")).toMatchObject({ success: true });
  expect(await agent.request({ type: "new_session" })).toMatchObject({ success: true });
  await agent.server.shutdown();
}

describe("a handler that never settles, in any hook", () => {
  it("is let go of on abort or shutdown: the command answered, the agent usable after", { timeout: Math.max(120_000, RUNS * 30_000) }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...HOOKS), fc.constantFrom("abort" as const, "shutdown" as const), async ([hook, trigger], exit) => {
        await hangIn(hook, trigger, exit);
      }),
      { numRuns: RUNS },
    );
  });
});
