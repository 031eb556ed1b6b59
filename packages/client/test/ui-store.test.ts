/**
 * UiStore: folding with the protocol's reducer, seeding from get_ui_state in stream order,
 * pending dialogs, change listeners.
 */
import { describe, expect, it } from "vitest";
import { UiStore, type UiChange } from "../src/index.js";
import { connectFake, settle } from "./helpers/fake-agent.js";

const ui = (method: string, fields: Record<string, unknown>) => ({ type: "extension_ui_request", id: `u-${Math.random()}`, method, ...fields });

describe("UiStore", () => {
  it("folds statuses, widgets (by key and placement), title, editor text and notifications", async () => {
    const { client, agent } = connectFake();
    const store = new UiStore();
    store.connect(client);
    agent.write(ui("setStatus", { statusKey: "a", statusText: "one" }));
    agent.write(ui("setStatus", { statusKey: "b", statusText: "two" }));
    agent.write(ui("setStatus", { statusKey: "a" })); // clears a
    agent.write(ui("setWidget", { widgetKey: "w1", widgetLines: ["x"] }));
    agent.write(ui("setWidget", { widgetKey: "w2", widgetLines: ["y", "z"], widgetPlacement: "belowEditor" }));
    agent.write(ui("setWidget", { widgetKey: "w1", widgetLines: ["x2"], widgetPlacement: "belowEditor" }));
    agent.write(ui("setWidget", { widgetKey: "w2" })); // clears w2
    agent.write(ui("setTitle", { title: "T" }));
    agent.write(ui("set_editor_text", { text: "draft" }));
    agent.write(ui("notify", { message: "hello" }));
    agent.write(ui("notify", { message: "careful", notifyType: "warning" }));
    agent.write({ type: "agent_start" }); // not UI: ignored
    await settle();
    expect(store.state).toEqual({
      statuses: { b: "two" },
      widgets: { w1: { lines: ["x2"], placement: "belowEditor" } },
      title: "T",
      editorText: "draft",
      notifications: [
        { message: "hello", notifyType: "info" },
        { message: "careful", notifyType: "warning" },
      ],
    });
  });

  it("UiStore.attach seeds from get_ui_state; records after the response fold on top, records before it are in the snapshot", async () => {
    const { client, agent } = connectFake();
    const attached = UiStore.attach(client);
    const command = await agent.command("get_ui_state");
    agent.write(ui("setStatus", { statusKey: "k", statusText: "before" })); // already part of the snapshot below
    agent.reply(command, {
      statuses: { k: "before", other: "o" },
      widgets: { w: { lines: ["l"], placement: "aboveEditor" } },
      title: "snap",
      notifications: [{ message: "old", notifyType: "info" }],
      pendingDialogs: [],
    });
    agent.write(ui("setStatus", { statusKey: "k", statusText: "after" }));
    const store = await attached;
    await settle();
    expect(store.state).toEqual({
      statuses: { k: "after", other: "o" },
      widgets: { w: { lines: ["l"], placement: "aboveEditor" } },
      title: "snap",
      notifications: [{ message: "old", notifyType: "info" }],
    });
  });

  it("against an agent without get_ui_state (pi) it starts empty and folds what comes", async () => {
    const { client, agent } = connectFake();
    const attached = UiStore.attach(client);
    await agent.command("get_ui_state");
    agent.write({ type: "response", command: "get_ui_state", success: false, error: "Unknown command: get_ui_state" });
    agent.write(ui("setTitle", { title: "pi" }));
    const store = await attached;
    await settle();
    expect(store.state).toEqual({ statuses: {}, widgets: {}, notifications: [], title: "pi" });
  });

  it("tracks pending dialogs and reports every change; dispose stops listening", async () => {
    const { client, agent } = connectFake();
    const store = new UiStore();
    store.connect(client);
    const changes: string[] = [];
    const sub = store.onChange((c: UiChange) =>
      changes.push(c.kind === "record" ? `record:${c.record.method}` : c.kind === "dialog_ended" ? `ended:${c.reason}` : c.kind),
    );
    client.ui.onDialog(() => {});
    agent.dialog("d1", "confirm");
    agent.dialog("d2", "input");
    agent.write(ui("notify", { message: "n" }));
    await settle();
    expect(store.pendingDialogs.map((d) => d.id)).toEqual(["d1", "d2"]);
    agent.write({ type: "extension_ui_dismissed", id: "d1", method: "confirm", reason: "timeout" });
    await settle();
    expect(store.pendingDialogs.map((d) => d.id)).toEqual(["d2"]);
    store.seed({ statuses: { s: "x" }, widgets: {}, notifications: [] });
    sub.dispose();
    store.dispose();
    agent.write(ui("setTitle", { title: "ignored" }));
    await settle();
    expect(changes).toEqual(["dialog_opened", "dialog_opened", "record:notify", "ended:dismissed", "seed"]);
    expect(store.state).toEqual({ statuses: { s: "x" }, widgets: {}, notifications: [] });
  });

  it("keys such as __proto__ are plain data", async () => {
    const { client, agent } = connectFake();
    const store = new UiStore();
    store.connect(client);
    agent.write(ui("setStatus", { statusKey: "__proto__", statusText: "p" }));
    await settle();
    expect(Object.keys(store.state.statuses)).toEqual(["__proto__"]);
    store.seed(JSON.parse('{"statuses":{"__proto__":"q"},"widgets":{},"notifications":[]}'));
    expect(store.state.statuses["__proto__"]).toBe("q");
    expect(({} as Record<string, unknown>)["q"]).toBeUndefined();
  });
});
