/**
 * The server's phase and the agent's run state, each one named state, seen through a real
 * in-process server: what a client sends at each point, and what the state is meanwhile.
 */
import type { RpcEvent } from "@parley/protocol";
import { describe, expect, it } from "vitest";
import type { AgentSession } from "../src/agent/agent-session.js";
import type { ExtensionAPI } from "../src/index.js";
import type { CommandTable } from "../src/modes/rpc/commands/types.js";
import { handlersFor } from "../src/modes/rpc/commands/types.js";
import type { ExtensionRuntime } from "../src/extensions/runtime.js";
import { RpcServer } from "../src/modes/rpc/server.js";
import { MemoryTransport } from "./helpers/memory-transport.js";

const MINUTE = 60_000;

function makeServer(...factories: ((pi: ExtensionAPI) => void)[]) {
  const transport = new MemoryTransport();
  const server = new RpcServer({
    transport,
    cwd: process.cwd(),
    extensions: factories.map((factory, i) => ({ path: `/ext/${i}.ts`, factory })),
    log: () => {},
    shutdownGraceMs: 200,
  });
  return { transport, server };
}

/** Resolves once `check` holds, looking again after each turn of the event loop. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

describe("explicit states", () => {
  it(
    "the server goes starting → serving → holding → serving → shutting_down → closed, holding lines while starting and holding",
    async () => {
      const { transport, server } = makeServer((pi) => {
        pi.on("session_start", async (_event, ctx) => {
          await ctx.ui.confirm("Ready?", "start-up waits for this");
        });
      });
      expect(server.phase).toBe("starting");
      const started = server.start();
      await until(() => transport.of("extension_ui_request").length > 0);
      // session_start waits for its dialog: commands are held, the dialog's answer is not.
      transport.line({ type: "get_state", id: "held" });
      expect(server.phase).toBe("starting");
      expect(transport.of("response")).toEqual([]);
      const confirm = transport.of("extension_ui_request")[0];
      transport.line({ type: "extension_ui_response", id: confirm?.["id"], confirmed: true });
      await started;
      expect(server.phase).toBe("serving");
      expect(transport.of("response").map((r) => r["id"])).toEqual(["held"]);

      // A command that needs the model catalogue holds the lines after it until the catalogue is in.
      transport.line({ type: "get_available_models", id: "models" });
      const catalogueLoaded = server.agent.models.catalogReady;
      if (!catalogueLoaded) expect(server.phase).toBe("holding");
      transport.line({ type: "get_state", id: "after" });
      await until(() => transport.of("response").length === 3);
      expect(server.phase).toBe("serving");
      expect(transport.of("response").map((r) => r["id"])).toEqual(["held", "models", "after"]);

      transport.sink?.end();
      expect(server.phase).toBe("shutting_down");
      transport.line({ type: "get_state", id: "ignored" });
      await server.closed;
      expect(server.phase).toBe("closed");
      expect(transport.of("response").map((r) => r["id"])).toEqual(["held", "models", "after"]);
    },
    MINUTE,
  );

  it(
    "the agent goes idle → preparing (input handlers run) → running → idle, and a prompt sent meanwhile waits for it, then is refused (no streamingBehavior)",
    async () => {
      const { transport, server } = makeServer((pi) => {
        pi.on("input", async (event, ctx) => {
          if (event.text === "ask first") await ctx.ui.confirm("Send?", event.text);
        });
      });
      await server.start();
      const agent = server.agent;
      expect(agent.runState).toBe("idle");
      transport.line({ type: "prompt", message: "ask first", id: "p1" });
      await until(() => transport.of("extension_ui_request").length > 0);
      expect(agent.runState).toBe("preparing");
      expect(agent.isStreaming).toBe(true);
      expect(agent.isRunning).toBe(false);
      // While the first is prepared, a second prompt waits for it, then finds a run and is refused.
      transport.line({ type: "prompt", message: "second", id: "p2" });
      const confirm = transport.of("extension_ui_request")[0];
      transport.line({ type: "extension_ui_response", id: confirm?.["id"], confirmed: true });
      await until(() => transport.of("response").length === 2);
      expect(transport.of("response").map((r) => [r["id"], r["success"]])).toEqual([
        ["p1", true],
        ["p2", false],
      ]);
      await until(() => transport.of("agent_settled").length > 0);
      expect(agent.runState).toBe("idle");
      await server.shutdown();
    },
    MINUTE,
  );
});

/**
 * Drift from the wire format does not compile: `tsc -p tsconfig.tests.json` (part of `npm test`)
 * fails if any line below stops being an error. Never called.
 */
export function driftDoesNotCompile(agent: AgentSession, runtime: ExtensionRuntime): void {
  const { sync, async } = handlersFor<"abort">();
  // A handler sees only the members of the agent its group names.
  const narrow: CommandTable<"abort"> = {
    abort: sync((_c, ctx) => {
      // @ts-expect-error the group named "abort", not "prompt"
      void ctx.agent.prompt;
      void ctx.agent.abort;
      return undefined;
    }),
  };
  // A handler's data is the protocol's ResponseData for its command.
  // @ts-expect-error get_state's data is a SessionState, not a string
  const table: CommandTable<"get_state"> = { get_state: sync(() => "state") };
  // A command without data sends none: its handler returns `undefined`, never a value.
  const silent: CommandTable<"set_auto_retry" | "abort" | "abort_bash"> = {
    // @ts-expect-error set_auto_retry's response carries no data
    set_auto_retry: sync(() => ({ enabled: true })),
    // @ts-expect-error abort's response carries no data, even from an async handler
    abort: async(async () => "aborted"),
    // @ts-expect-error a block body without `return undefined` is void, which could hide a value
    abort_bash: sync(() => {}),
  };
  // An async handler's early answer carries the command's data, as the protocol defines it.
  const early: CommandTable<"prompt"> = {
    prompt: async(async (_c, _ctx, respond) => {
      // @ts-expect-error prompt is answered with a disposition, not another shape
      respond({ accepted: true });
      return { disposition: "started" };
    }),
  };
  // Events are the protocol's union.
  // @ts-expect-error queue_update carries steering and followUp arrays
  agent.emit({ type: "queue_update", steering: "one" });
  // @ts-expect-error there is no such event
  const event: RpcEvent = { type: "agent_paused" };
  // Hooks are typed per event, results included.
  // @ts-expect-error tool_call's toolCallId is a string
  void runtime.emit({ type: "tool_call", toolCallId: 1, toolName: "bash", input: {}, block: false, reason: undefined });
  void runtime.emitChained({ type: "context", messages: [] }, (e, result) => {
    // @ts-expect-error a context handler's result has messages, not text
    void result.text;
    return { event: e };
  });
  void [table, silent, early, event, narrow];
}
