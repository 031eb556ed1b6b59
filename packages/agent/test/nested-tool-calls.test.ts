/**
 * Nested tool calls (ctx.executeTool) in process: the bounds of the record kept on the calling
 * tool's result, the one-at-a-time queue (a nested call inside a queued call must not wait for
 * itself), and hooks seeing the nested id and its parent. The spawned-CLI side is in
 * tool-surface.e2e.test.ts.
 */
import type { AgentTool } from "@earendil-works/pi-agent-core";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { NESTED_CALL_LIMITS, type NestedCallEvent, NestedToolCalls } from "../src/agent/nested-tool-calls.js";
import type { ToolCallRef } from "../src/agent/tool-hooks.js";

function tool(name: string, run: () => Promise<string>, executionMode?: "sequential"): AgentTool<any, any> {
  return {
    name,
    label: name,
    description: name,
    parameters: Type.Object({}, { additionalProperties: true }),
    ...(executionMode ? { executionMode } : {}),
    execute: async () => ({ content: [{ type: "text", text: await run() }], details: {} }),
  };
}

function runner(tools: AgentTool<any, any>[], options: { sequential?: boolean } = {}) {
  const events: NestedCallEvent[] = [];
  const calls: ToolCallRef[] = [];
  const nested = new NestedToolCalls({
    callableTools: () => tools,
    sequential: () => options.sequential === true,
    emit: async (event) => void events.push(event),
    hooks: {
      before: async (call) => {
        calls.push(call);
        return undefined;
      },
      after: async () => undefined,
    },
  });
  return { nested, events, calls };
}

describe("NestedToolCalls", () => {
  it("records at most maxCalls calls and leaves out arguments over the size limits; the record then says it is incomplete", async () => {
    const { nested } = runner([tool("echo", async () => "ok")]);
    const big = "x".repeat(NESTED_CALL_LIMITS.maxArgumentBytesPerCall);
    await nested.execute("c", "echo", { text: big }, {});
    for (let i = 1; i < NESTED_CALL_LIMITS.maxCalls + 5; i++) await nested.execute("c", "echo", { i }, {});
    const taken = nested.take("c");
    expect(taken?.calls?.complete).toBe(false);
    expect(taken?.calls?.calls).toHaveLength(NESTED_CALL_LIMITS.maxCalls);
    expect(taken?.calls?.calls[0]).toMatchObject({ id: "c/1", status: "ok", argumentsBytes: big.length + '{"text":""}'.length });
    expect(taken?.calls?.calls[0]).not.toHaveProperty("arguments");
    expect(taken?.calls?.calls[1]).toMatchObject({ id: "c/2", arguments: { i: 1 }, status: "ok" });
    // Taken once: a second take finds nothing.
    expect(nested.take("c")).toBeUndefined();
  });

  it("one at a time when the loop is sequential, yet a call a queued call makes runs inside it instead of waiting for it", async () => {
    let running = 0;
    let most = 0;
    const tools: AgentTool<any, any>[] = [];
    const { nested, calls } = runner(tools, { sequential: true });
    tools.push(
      tool("leaf", async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setImmediate(resolve));
        running--;
        return "leaf";
      }),
      {
        ...tool("outer", async () => ""),
        // Holds the queue while it runs, and calls leaf from inside: leaf must not wait for outer.
        execute: async (id: string) => {
          const inner = await nested.execute(id, "leaf", {}, {});
          return { content: [{ type: "text", text: `inner ${inner.toolCall.id} ${inner.isError}` }], details: {} };
        },
      },
    );
    const outcomes = await Promise.all([nested.execute("c", "leaf", {}, {}), nested.execute("c", "outer", {}, {}), nested.execute("c", "leaf", {}, {})]);
    expect(outcomes.map((o) => [o.toolCall.id, o.isError, o.result.content[0]?.type === "text" ? o.result.content[0].text : ""])).toEqual([
      ["c/1", false, "leaf"],
      ["c/2", false, "inner c/2/1 false"],
      ["c/3", false, "leaf"],
    ]);
    expect(most).toBe(1);
    // Hooks hear each nested id with its parent.
    expect(calls.map((c) => [c.id, c.parentToolCallId]).sort()).toEqual([
      ["c/1", "c"],
      ["c/2", "c"],
      ["c/2/1", "c/2"],
      ["c/3", "c"],
    ]);
    // The inner call is recorded with the outer model-issued call's record.
    expect(nested.take("c")?.calls?.calls.map((r) => r.id)).toEqual(["c/1", "c/2", "c/3", "c/2/1"]);
  });
});
