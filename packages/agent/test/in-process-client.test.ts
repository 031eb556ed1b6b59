/**
 * A real RpcClient (`@parley/client`) driving an in-process RpcServer over the linked pair
 * (`inProcessTransportPair`): commands, runs and their events, dialogs answered by the client's
 * handlers, the UI store, and both ways a connection ends. No pipes and no sleeps: every wait is
 * for a response, an event or the connection's end.
 */
import { RpcClient, RpcError, UiStore, type AgentRecord } from "@parley/client";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { inProcessTransportPair } from "../src/index.js";
import { serveToClient } from "./helpers/in-process.js";

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((h) => h.close()));
});
async function serve(...args: Parameters<typeof serveToClient>) {
  const harness = await serveToClient(...args);
  opened.push(harness);
  return harness;
}

describe("commands", () => {
  it("answers typed commands: state, session name, commands, messages", async () => {
    const { client } = await serve([], [(pi) => pi.registerCommand("hello", { description: "says hello", handler: async () => {} })]);
    const state = await client.getState();
    expect(state).toMatchObject({ isStreaming: false, messageCount: 0, model: { provider: "parley", id: "script" } });
    await client.setSessionName("in process");
    expect((await client.getState()).sessionName).toBe("in process");
    expect(await client.getCommands()).toContainEqual(expect.objectContaining({ name: "hello", description: "says hello", source: "extension" }));
    expect(await client.getMessages()).toEqual([]);
  });

  it("rejects a failed command with the agent's error", async () => {
    const { client } = await serve([]);
    const failure = await client.setModel("nobody", "nothing").catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RpcError);
    expect((failure as RpcError).command).toBe("set_model");
    expect((failure as RpcError).message).toMatch(/nobody/);
  });

  it("answers malformed input with a parse error and keeps serving", async () => {
    const { client, transport } = await serve([]);
    const records: AgentRecord[] = [];
    client.onAny((record) => records.push(record));
    transport.sendRaw("not json\n");
    // Split across writes, as a pipe may deliver it: one line, one command.
    transport.sendRaw('{"type":"get_st');
    transport.sendRaw('ate","id":"raw-1"}\n');
    await client.getState();
    expect(records.filter((r) => r.type === "response").map((r) => [r["command"], r["success"], r["id"]])).toEqual([
      ["parse", false, undefined],
      ["get_state", true, "raw-1"],
      ["get_state", true, expect.any(String)],
    ]);
  });
});

describe("runs and their events", () => {
  it("runs a prompt to its end: the reply, the run's events in order, the session's messages", async () => {
    const { client } = await serve(["Hello from the script"]);
    const types: string[] = [];
    client.onAny((record) => {
      if (record.type !== "response") types.push(record.type);
    });
    const settled = new Promise<void>((resolve) => client.on("agent_settled", () => resolve()));
    const result = await client.run("hi");
    await settled;
    expect(result.text).toBe("Hello from the script");
    // The run's messages start with the system prompt it recorded, as pi 1.6's do.
    expect(result.messages.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
    expect(types[0]).toBe("agent_start");
    expect(types).toContain("message_update");
    expect(types.indexOf("agent_end")).toBeLessThan(types.indexOf("agent_settled"));
    expect((await client.getMessages()).map((m) => m.role)).toEqual(["system", "user", "assistant"]);
    expect(await client.getLastAssistantText()).toBe("Hello from the script");
  });

  it("streams a tool call: its execution events carry the tool's result, then the model answers", async () => {
    const { client, dir } = await serve([{ toolCalls: [{ name: "read", arguments: { path: "note.txt" } }] }, "I read it"]);
    writeFileSync(join(dir, "note.txt"), "the note's text\n");
    const events = [];
    for await (const event of client.stream("read the note")) if (event.type.startsWith("tool_execution_")) events.push(event);
    expect(events.map((e) => e.type)).toEqual(["tool_execution_start", "tool_execution_end"]);
    expect(events[0]).toMatchObject({ toolName: "read", args: { path: "note.txt" } });
    expect(JSON.stringify(events[1])).toContain("the note's text");
    expect(await client.getLastAssistantText()).toBe("I read it");
  });

  it("runs a user bash command and reports its output", async () => {
    const { client } = await serve([]);
    const result = await client.bash("echo in-process");
    expect(result).toMatchObject({ output: "in-process\n", exitCode: 0, cancelled: false });
  });
});

describe("dialogs answered through the client's handlers", () => {
  it("confirm, select, input and editor each reach the extension with the handler's answer", async () => {
    const answers: unknown[] = [];
    const { client } = await serve(
      [],
      [
        (pi) =>
          pi.registerCommand("ask", {
            handler: async (_args, ctx) => {
              answers.push(await ctx.ui.confirm("Sure?", "really"));
              answers.push(await ctx.ui.select("Pick", ["a", "b"]));
              answers.push(await ctx.ui.input("Name", "placeholder"));
              answers.push(await ctx.ui.editor("Edit", "draft"));
            },
          }),
      ],
    );
    const seen: string[] = [];
    client.ui.handle("confirm", (request) => (seen.push(`${request.title}/${request.message}`), true));
    client.ui.handle("select", (request) => request.options.at(-1));
    client.ui.handle("input", async (request) => `typed for ${request.title}`);
    client.ui.handle("editor", (request) => `${request.prefill ?? ""} edited`);
    await client.prompt("/ask");
    expect(answers).toEqual([true, "b", "typed for Name", "draft edited"]);
    expect(seen).toEqual(["Sure?/really"]);
    expect(client.ui.pending()).toEqual([]);
  });

  it("a handler's cancel (undefined) reaches the extension as pi's cancel values", async () => {
    const answers: unknown[] = [];
    const { client } = await serve(
      [],
      [
        (pi) =>
          pi.registerCommand("ask", {
            handler: async (_args, ctx) => {
              answers.push(await ctx.ui.confirm("Sure?", ""));
              answers.push(await ctx.ui.select("Pick", ["a"]));
            },
          }),
      ],
    );
    client.ui.handle("confirm", () => undefined);
    client.ui.handle("select", () => undefined);
    await client.prompt("/ask");
    expect(answers).toEqual([false, undefined]);
  });

  it("session_before_switch asks the user through the client and can cancel new_session", async () => {
    const { client } = await serve(
      [],
      [
        (pi) =>
          pi.on("session_before_switch", async (event, ctx) => {
            const ok = await ctx.ui.confirm("Clear session?", `reason=${event.reason}`);
            return ok ? undefined : { cancel: true };
          }),
      ],
    );
    const asked: string[] = [];
    let allow = false;
    client.ui.handle("confirm", (request) => (asked.push(request.message), allow));
    await client.setSessionName("kept");
    expect(await client.newSession()).toEqual({ cancelled: true });
    expect((await client.getState()).sessionName).toBe("kept");
    allow = true;
    expect(await client.newSession()).toEqual({ cancelled: false });
    expect((await client.getState()).sessionName).toBeUndefined();
    expect(asked).toEqual(["reason=new", "reason=new"]);
  });

  it("a dialog left open ends for the client as dismissed when the agent shuts down", async () => {
    const results: unknown[] = [];
    const { client, server } = await serve(
      [],
      [(pi) => pi.registerCommand("ask", { handler: async (_args, ctx) => void results.push(await ctx.ui.input("Waiting")) })],
    );
    // A user who never answers: the handler waits until the dialog ends without it.
    let aborted = false;
    client.ui.handle(
      "input",
      (_request, signal) =>
        new Promise<undefined>((resolve) =>
          signal.addEventListener("abort", () => {
            aborted = true;
            resolve(undefined);
          }),
        ),
    );
    const opened = new Promise<void>((resolve) => client.ui.onOpen(() => resolve()));
    const ended = new Promise<string>((resolve) => client.ui.onEnd((end) => resolve(end.reason)));
    const prompt = client.prompt("/ask");
    await opened;
    expect(client.ui.pending().map((d) => d.method)).toEqual(["input"]);
    await server.shutdown();
    expect(await ended).toBe("dismissed");
    await prompt;
    expect(results).toEqual([undefined]);
    expect(aborted).toBe(true);
  });
});

describe("extension commands", () => {
  it("a command registered by two extensions is invoked as name:1 and name:2, as in pi", async () => {
    const { client } = await serve(
      [],
      [
        (pi) => pi.registerCommand("dup", { handler: async (_a, ctx) => ctx.ui.notify("first") }),
        (pi) => pi.registerCommand("dup", { handler: async (_a, ctx) => ctx.ui.notify("second") }),
      ],
    );
    const notes: string[] = [];
    client.on("extension_ui_request", (request) => {
      if (request.method === "notify") notes.push(request.message);
    });
    expect((await client.getCommands()).map((c) => c.name).filter((n) => n.startsWith("dup"))).toEqual(["dup:1", "dup:2"]);
    await client.prompt("/dup:2");
    await client.prompt("/dup:1");
    expect(notes).toEqual(["second", "first"]);
  });
});

describe("fire-and-forget UI", () => {
  it("a UiStore attached to the client folds statuses, widgets and notifications", async () => {
    const { client } = await serve(
      [],
      [
        (pi) =>
          pi.registerCommand("paint", {
            handler: async (_args, ctx) => {
              ctx.ui.setStatus("build", "green");
              ctx.ui.setWidget("todo", ["one", "two"]);
              ctx.ui.notify("done", "info");
            },
          }),
      ],
    );
    const store = await UiStore.attach(client);
    await client.prompt("/paint");
    expect(store.state.statuses).toEqual({ build: "green" });
    expect(store.state.widgets["todo"]).toMatchObject({ lines: ["one", "two"] });
    expect(store.state.notifications.map((n) => n.message)).toEqual(["done"]);
    store.dispose();
  });
});

describe("the connection's end", () => {
  it("client.close() ends the agent's input: the server shuts down, session_shutdown runs", async () => {
    const seen: string[] = [];
    const { client, server } = await serve([], [(pi) => pi.on("session_shutdown", () => void seen.push("shutdown"))]);
    await client.getState();
    await client.close();
    await server.closed;
    expect(seen).toEqual(["shutdown"]);
    expect(client.state).toBe("closed");
  });

  it("the agent closing its end closes the client (remote) and fails what was pending", async () => {
    const pair = inProcessTransportPair();
    const records: object[] = [];
    pair.agent.start({ line: (text) => records.push(JSON.parse(text) as object), overflow: () => {}, end: () => {} });
    const client = new RpcClient(pair.client);
    const pending = client.getState().catch((error: unknown) => error);
    pair.agent.close();
    expect(await pair.client.closed).toEqual({ reason: "remote" });
    expect(String(await pending)).toMatch(/closed/i);
    expect(records).toEqual([expect.objectContaining({ type: "get_state" })]);
  });

  it("lines longer than the limit are reported to the server as an overflow, not handed on", async () => {
    const pair = inProcessTransportPair({ maxLineBytes: 64 });
    const lines: string[] = [];
    const overflows: number[] = [];
    pair.agent.start({ line: (text) => lines.push(text), overflow: (info) => overflows.push(info.maxLineBytes), end: () => lines.push("<end>") });
    pair.client.sendRaw(`${"x".repeat(100)}\n{"type":"get_state"}\n`);
    await pair.client.close();
    await pair.agent.flush();
    expect(overflows).toEqual([64]);
    expect(lines).toEqual(['{"type":"get_state"}', "<end>"]);
  });
});
