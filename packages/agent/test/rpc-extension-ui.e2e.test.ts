/**
 * The extension UI sub-protocol through the real wire: the spawned CLI, real pipes, JSONL.
 */
import { describe, expect, it } from "vitest";
import { checkedAgents } from "./helpers/checked-agents.js";
import { DEMO, openDialog, spawnParley, type AgentProcess, type Rec } from "./helpers/spawn.js";

const agents = checkedAgents();
function start(args: string[] = ["-e", DEMO]): AgentProcess {
  const agent = spawnParley(args);
  agents.push(agent);
  return agent;
}

const notifyAfter = (agent: AgentProcess, from: number) => agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "notify", 10_000, from);
const answer = (agent: AgentProcess, request: Rec, body: object) => agent.send({ type: "extension_ui_response", id: request["id"], ...body });

describe("dialogs", () => {
  it("select: request fields, the chosen value, and cancel", async () => {
    const agent = start();
    const req = await openDialog(agent, "/demo-select", "select");
    expect(req).toEqual({ type: "extension_ui_request", id: expect.any(String), method: "select", title: "Pick a colour", options: ["red", "green", "blue"] });
    const from = agent.records.length;
    answer(agent, req, { value: "green" });
    expect((await notifyAfter(agent, from))["message"]).toBe("select: green");

    const again = await openDialog(agent, "/demo-select", "select");
    const from2 = agent.records.length;
    answer(agent, again, { cancelled: true });
    expect((await notifyAfter(agent, from2))["message"]).toBe("select: cancelled");
  });

  it("confirm: true, false and cancelled", async () => {
    const agent = start();
    for (const [body, expected] of [
      [{ confirmed: true }, "confirm: true"],
      [{ confirmed: false }, "confirm: false"],
      [{ cancelled: true }, "confirm: false"],
    ] as const) {
      const req = await openDialog(agent, "/demo-confirm", "confirm");
      expect(req).toMatchObject({ method: "confirm", title: "Proceed?", message: "The demo will pretend to do something." });
      const from = agent.records.length;
      answer(agent, req, body);
      expect((await notifyAfter(agent, from))["message"]).toBe(expected);
    }
  });

  it("input carries its placeholder; editor its prefill; the prompt response follows the command", async () => {
    const agent = start();
    agent.send({ type: "prompt", message: "/demo-input a placeholder", id: "p1" });
    const input = await agent.waitFor((r) => r["method"] === "input");
    expect(input).toMatchObject({ title: "Your name?", placeholder: "a placeholder" });
    expect(input).not.toHaveProperty("timeout");
    // The command is still running: its prompt response has not been sent yet.
    expect(agent.records.some((r) => r["id"] === "p1")).toBe(false);
    answer(agent, input, { value: "Ada\u2028Lovelace" });
    await agent.response("p1");
    expect(agent.records.find((r) => r["method"] === "notify")?.["message"]).toBe("input: Ada\u2028Lovelace");

    const editor = await openDialog(agent, "/demo-editor", "editor");
    expect(editor).toMatchObject({ title: "Edit the note", prefill: "line one\nline two" });
    const from = agent.records.length;
    answer(agent, editor, { value: "a\nb\nc" });
    expect((await notifyAfter(agent, from))["message"]).toBe("editor: 3 lines");
  });

  it("a timed dialog announces its timeout, resolves with the default and is announced as dismissed", async () => {
    const agent = start();
    const req = await openDialog(agent, "/demo-timed 300", "confirm");
    expect(req["timeout"]).toBe(300);
    const dismissed = await agent.waitFor((r) => r.type === "extension_ui_dismissed");
    expect(dismissed).toEqual({ type: "extension_ui_dismissed", id: req["id"], method: "confirm", reason: "timeout" });
    const note = await notifyAfter(agent, agent.records.indexOf(dismissed));
    expect(note["message"]).toBe("timed confirm: false");
    // A late answer is refused, not silently dropped.
    answer(agent, req, { confirmed: true });
    expect(await agent.waitFor((r) => r.type === "extension_ui_error")).toMatchObject({ id: req["id"], code: "already_resolved", pending: false });
  });

  it("editor honours timeout too", async () => {
    const agent = start();
    const req = await openDialog(agent, "/demo-timed-editor 200", "editor");
    expect(req).toMatchObject({ timeout: 200, prefill: "draft" });
    await agent.waitFor((r) => r.type === "extension_ui_dismissed" && r["reason"] === "timeout");
    expect((await notifyAfter(agent, 0))["message"]).toBe("timed editor: no text");
  });

  it("an aborted dialog is dismissed with reason aborted", async () => {
    const agent = start();
    const req = await openDialog(agent, "/demo-abort 100", "input");
    const dismissed = await agent.waitFor((r) => r.type === "extension_ui_dismissed");
    expect(dismissed).toMatchObject({ id: req["id"], method: "input", reason: "aborted" });
    expect((await notifyAfter(agent, 0))["message"]).toBe("abort: withdrawn by the extension");
  });
});

describe("refused answers", () => {
  it("wrong shapes keep the dialog pending; unknown and repeated ids are reported", async () => {
    const agent = start();
    const confirm = await openDialog(agent, "/demo-confirm", "confirm");
    answer(agent, confirm, { value: "yes" });
    answer(agent, confirm, { confirmed: "yes" });
    const errors = async (n: number) => {
      await agent.until(() => agent.records.filter((r) => r.type === "extension_ui_error").length >= n);
      return agent.records.filter((r) => r.type === "extension_ui_error");
    };
    const [e1, e2] = await errors(2);
    expect(e1).toMatchObject({ id: confirm["id"], code: "invalid_response", pending: true });
    expect(e2).toMatchObject({ id: confirm["id"], code: "invalid_response", pending: true });
    const from = agent.records.length;
    answer(agent, confirm, { confirmed: true });
    expect((await notifyAfter(agent, from))["message"]).toBe("confirm: true");
    answer(agent, confirm, { confirmed: true });
    expect((await errors(3))[2]).toMatchObject({ code: "already_resolved" });

    const select = await openDialog(agent, "/demo-select", "select");
    answer(agent, select, { value: "purple" });
    expect((await errors(4))[3]).toMatchObject({ code: "invalid_response", pending: true, error: expect.stringContaining("not one of its options") });
    const input = await openDialog(agent, "/demo-input", "input");
    answer(agent, input, { value: 42 });
    expect((await errors(5))[4]).toMatchObject({ code: "invalid_response", error: expect.stringContaining("not a string") });

    agent.send({ type: "extension_ui_response", id: "no-such-dialog", value: "x" });
    expect((await errors(6))[5]).toMatchObject({ id: "no-such-dialog", code: "unknown_id", pending: false });
    // A fire-and-forget request takes no answer.
    const status = agent.records.find((r) => r["method"] === "setStatus") as Rec;
    answer(agent, status, { value: "x" });
    expect((await errors(7))[6]).toMatchObject({ code: "unknown_id", error: expect.stringContaining("fire-and-forget") });
    // get_ui_state still shows the select and input as pending.
    const state = await agent.request({ type: "get_ui_state" });
    expect((state["data"] as { pendingDialogs: { request: Rec }[] }).pendingDialogs.map((d) => d.request["method"])).toEqual(["select", "input"]);
  });
});

describe("fire-and-forget", () => {
  it("notify of each type, widgets above/below and cleared, status cleared, title and editor text", async () => {
    const agent = start();
    await agent.request({ type: "prompt", message: "/demo-notify" });
    const notes = agent.records.filter((r) => r["method"] === "notify");
    expect(notes.map((n) => [n["message"], n["notifyType"]])).toEqual([
      ["an info note", undefined],
      ["a warning", "warning"],
      ["an error", "error"],
    ]);
    await agent.request({ type: "prompt", message: "/demo-widgets" });
    const widgets = agent.records.filter((r) => r["method"] === "setWidget");
    expect(widgets.slice(-2)).toEqual([
      { type: "extension_ui_request", id: expect.any(String), method: "setWidget", widgetKey: "demo-above", widgetLines: ["above the editor"] },
      {
        type: "extension_ui_request",
        id: expect.any(String),
        method: "setWidget",
        widgetKey: "demo-below",
        widgetLines: ["below the editor", "(second line)"],
        widgetPlacement: "belowEditor",
      },
    ]);
    await agent.request({ type: "prompt", message: "/demo-prefill hello" });
    await agent.request({ type: "prompt", message: "/demo-title My title" });
    let ui = (await agent.request({ type: "get_ui_state" }))["data"] as Record<string, unknown>;
    expect(ui).toMatchObject({
      title: "My title",
      editorText: "hello",
      statuses: { "rpc-demo": "ready" },
      widgets: {
        "rpc-demo": { placement: "aboveEditor" },
        "demo-above": { lines: ["above the editor"], placement: "aboveEditor" },
        "demo-below": { lines: ["below the editor", "(second line)"], placement: "belowEditor" },
      },
      pendingDialogs: [],
    });
    expect((ui["notifications"] as unknown[]).length).toBe(3);

    await agent.request({ type: "prompt", message: "/demo-widgets clear" });
    const cleared = agent.records.filter((r) => r["method"] === "setWidget").slice(-2);
    for (const c of cleared) expect(c).not.toHaveProperty("widgetLines");
    const statusClear = agent.records.filter((r) => r["method"] === "setStatus").at(-1);
    expect(statusClear).toEqual({ type: "extension_ui_request", id: expect.any(String), method: "setStatus", statusKey: "rpc-demo" });
    ui = (await agent.request({ type: "get_ui_state" }))["data"] as Record<string, unknown>;
    expect(Object.keys(ui["widgets"] as object)).toEqual(["rpc-demo"]);
    expect(ui["statuses"]).toEqual({});
  });

  it("degraded methods return what the spec lists and are diagnosed once on stderr", async () => {
    const agent = start();
    await agent.request({ type: "prompt", message: "/demo-degraded" });
    await agent.request({ type: "prompt", message: "/demo-degraded" });
    const note = agent.records.filter((r) => r["method"] === "notify")[0];
    expect(note?.["message"]).toBe(
      'mode=rpc hasUI=true custom=undefined editorText="" setTheme={"success":false,"error":"Theme switching not supported in RPC mode"}',
    );
    const stderr = agent.stderr();
    for (const method of ["custom", "setTheme", "getEditorText"]) {
      const lines = stderr.split("\n").filter((l) => l.includes(`ctx.ui.${method}()`));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain("rpc-demo.ts");
    }
  });
});

describe("late attach", () => {
  it("get_ui_state lists pending dialogs with their remaining time", async () => {
    const agent = start();
    const timed = await openDialog(agent, "/demo-timed 60000", "confirm");
    const plain = await openDialog(agent, "/demo-select", "select");
    const data = (await agent.request({ type: "get_ui_state" }))["data"] as { pendingDialogs: { request: Rec; remainingMs?: number }[] };
    expect(data.pendingDialogs.map((d) => d.request)).toEqual([timed, plain]);
    expect(data.pendingDialogs[0]?.remainingMs).toBeGreaterThan(50_000);
    expect(data.pendingDialogs[0]?.remainingMs).toBeLessThanOrEqual(60_000);
    expect(data.pendingDialogs[1]).not.toHaveProperty("remainingMs");
  });
});
