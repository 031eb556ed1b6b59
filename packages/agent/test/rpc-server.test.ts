/**
 * The RPC server in-process, over a bare memory transport: no pipes, extensions as inline
 * factories, records read as written. Behaviour a client sees is tested with a real RpcClient
 * in in-process-client.test.ts; this file keeps what needs the raw records (line order, logs).
 */
import { describe, expect, it, vi } from "vitest";
import type { ExtensionAPI } from "../src/index.js";
import { RpcServer } from "../src/modes/rpc/server.js";
import { MemoryTransport } from "./helpers/memory-transport.js";

async function serve(...factories: ((pi: ExtensionAPI) => void)[]) {
  const transport = new MemoryTransport();
  const logs: string[] = [];
  const server = new RpcServer({
    transport,
    cwd: process.cwd(),
    extensions: factories.map((factory, i) => ({ path: `/ext/${i}.ts`, factory })),
    log: (m) => logs.push(m),
    shutdownGraceMs: 200,
  });
  await server.start();
  const tick = () => new Promise((r) => setImmediate(r));
  return { transport, server, logs, tick };
}

describe("RpcServer in-process", () => {
  it("sync commands answer in order even when a long-running command is still waiting", async () => {
    const { transport, tick } = await serve((pi) => {
      pi.registerCommand("ask", { handler: async (_a, ctx) => void (await ctx.ui.input("q")) });
    });
    transport.line({ type: "prompt", message: "/ask", id: "p" });
    transport.line({ type: "get_state", id: "s1" });
    transport.line("garbage");
    transport.line({ type: "get_commands", id: "s2" });
    await tick();
    expect(transport.of("response").map((r) => r["id"] ?? r["command"])).toEqual(["s1", "parse", "s2"]);
    const input = transport.of("extension_ui_request")[0];
    transport.line({ type: "extension_ui_response", id: input?.["id"], value: "v" });
    await tick();
    expect(transport.of("response").map((r) => r["id"] ?? r["command"])).toEqual(["s1", "parse", "s2", "p"]);
  });

  it("setStatus/setWidget with null clear like undefined; factories are ignored with a diagnostic", async () => {
    const { transport, server, logs } = await serve((pi) => {
      pi.on("session_start", (_e, ctx) => {
        ctx.ui.setStatus("k", "v");
        ctx.ui.setStatus("k", null as unknown as undefined);
        ctx.ui.setWidget("w", ["a"]);
        ctx.ui.setWidget("w", null as unknown as undefined);
        ctx.ui.setWidget("f", () => ({}));
      });
    });
    const statuses = transport.of("extension_ui_request").filter((r) => r["method"] === "setStatus");
    expect(statuses[1]).not.toHaveProperty("statusText");
    expect(transport.of("extension_ui_request").filter((r) => r["widgetKey"] === "f")).toEqual([]);
    expect(server.host.uiState()).toMatchObject({ statuses: {}, widgets: {} });
    expect(logs.some((l) => l.includes("/ext/0.ts") && l.includes("setWidget"))).toBe(true);
  });

  it("theme styling returns the text unchanged", async () => {
    let styled = "";
    await serve((pi) => {
      pi.on("session_start", (_e, ctx) => {
        styled = `${ctx.ui.theme["fg"]?.("accent", "a") ?? ""}${ctx.ui.theme["bold"]?.("b") ?? ""}`;
      });
    });
    expect(styled).toBe("ab");
  });

  it("shutdown resolves pending dialogs and waits (bounded) for running commands", async () => {
    const seen: string[] = [];
    const { transport, server, tick } = await serve((pi) => {
      pi.registerCommand("ask", {
        handler: async (_a, ctx) => {
          seen.push(String(await ctx.ui.select("s", ["a"])));
        },
      });
      pi.on("session_shutdown", () => void seen.push("shutdown"));
    });
    transport.line({ type: "prompt", message: "/ask", id: "p" });
    await tick();
    transport.sink?.end();
    await server.closed;
    expect(seen).toEqual(["undefined", "shutdown"]);
    expect(transport.of("extension_ui_dismissed")).toHaveLength(1);
    expect(transport.of("response").at(-1)).toMatchObject({ id: "p", success: true });
  });
});

describe("degraded ctx.ui methods", () => {
  it("return exactly what pi's spec lists, and each is diagnosed once", async () => {
    let results: Record<string, unknown> = {};
    const { transport, logs } = await serve((pi) => {
      pi.on("session_start", async (_e, ctx) => {
        const ui = ctx.ui;
        const unsubscribe = ui.onTerminalInput(() => undefined);
        results = {
          custom: await ui.custom(() => undefined),
          onTerminalInput: typeof unsubscribe,
          unsubscribeResult: unsubscribe(),
          setWorkingMessage: ui.setWorkingMessage("x"),
          setWorkingVisible: ui.setWorkingVisible(false),
          setWorkingIndicator: ui.setWorkingIndicator({}),
          setHiddenThinkingLabel: ui.setHiddenThinkingLabel("x"),
          setFooter: ui.setFooter(undefined),
          setHeader: ui.setHeader(undefined),
          addAutocompleteProvider: ui.addAutocompleteProvider(() => undefined),
          setEditorComponent: ui.setEditorComponent(undefined),
          setToolsExpanded: ui.setToolsExpanded(true),
          getEditorText: ui.getEditorText(),
          getEditorComponent: ui.getEditorComponent(),
          getToolsExpanded: ui.getToolsExpanded(),
          getAllThemes: ui.getAllThemes(),
          getTheme: ui.getTheme("dark"),
          setTheme: ui.setTheme("dark"),
        };
        ui.getEditorText();
        ui.pasteToEditor("pasted");
      });
    });
    expect(results).toEqual({
      custom: undefined,
      onTerminalInput: "function",
      unsubscribeResult: undefined,
      setWorkingMessage: undefined,
      setWorkingVisible: undefined,
      setWorkingIndicator: undefined,
      setHiddenThinkingLabel: undefined,
      setFooter: undefined,
      setHeader: undefined,
      addAutocompleteProvider: undefined,
      setEditorComponent: undefined,
      setToolsExpanded: undefined,
      getEditorText: "",
      getEditorComponent: undefined,
      getToolsExpanded: false,
      getAllThemes: [],
      getTheme: undefined,
      setTheme: { success: false, error: "Theme switching not supported in RPC mode" },
    });
    // pasteToEditor maps to set_editor_text.
    expect(transport.of("extension_ui_request").at(-1)).toMatchObject({ method: "set_editor_text", text: "pasted" });
    for (const method of Object.keys(results).filter((m) => m !== "unsubscribeResult")) {
      expect(logs.filter((l) => l.includes(`ctx.ui.${method}()`) && l.startsWith("/ext/0.ts"))).toHaveLength(1);
    }
  });
});

describe("a slow extension factory", () => {
  it("is waited for, with a notice on the log every interval until it finishes", async () => {
    // The notice's interval runs on vitest's clock: the test moves time, it never waits for it.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    try {
      const transport = new MemoryTransport();
      const logs: string[] = [];
      let finish = (): void => {};
      const server = new RpcServer({
        transport,
        cwd: process.cwd(),
        extensions: [{ path: "/ext/slow.ts", factory: () => new Promise<void>((resolve) => (finish = resolve)) }],
        log: (m) => logs.push(m),
        slowExtensionNoticeMs: 40_000,
      });
      const notices = (): string[] => logs.filter((m) => m.includes("/ext/slow.ts"));
      const started = server.start();
      while (vi.getTimerCount() === 0) await new Promise((resolve) => setImmediate(resolve));
      vi.advanceTimersByTime(39_999);
      expect(notices()).toEqual([]);
      vi.advanceTimersByTime(1);
      vi.advanceTimersByTime(40_000);
      expect(notices()).toEqual([
        "extension /ext/slow.ts (its factory) has not finished after 40 s; commands wait until it does",
        "extension /ext/slow.ts (its factory) has not finished after 80 s; commands wait until it does",
      ]);
      finish();
      await started;
      transport.line({ type: "get_state", id: "after" });
      while (!transport.sent.some((r) => r["id"] === "after")) await new Promise((resolve) => setImmediate(resolve));
      // Finished: the notice's timer is gone, however long time runs on.
      vi.advanceTimersByTime(400_000);
      expect(notices()).toHaveLength(2);
      await server.shutdown();
    } finally {
      vi.useRealTimers();
    }
  });
});
