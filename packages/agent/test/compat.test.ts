import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "typebox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as compat from "../src/extensions/compat/pi-coding-agent.js";
import { NEWEST_PI_VERSION } from "../src/extensions/compat/pi-versions.js";
import { loadExtension } from "../src/extensions/loader.js";
import { serveScripted } from "./helpers/in-process.js";
import { createReadTool as parleyCreateReadTool } from "../src/tools/index.js";

let pi: Record<string, any>;
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "parley-compat-"));
  process.env.PI_CODING_AGENT_DIR = join(scratch, "pi-agent"); // keep pi away from ~/.pi
  pi = (await import("@mariozechner/pi-coding-agent")) as Record<string, any>;
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

const mod = compat as unknown as Record<string, any>;

describe("pi-coding-agent compat module", () => {
  it("exports every value export of pi's package root, with the same kind", () => {
    const names = Object.keys(pi);
    expect(names.length).toBeGreaterThan(100);
    const missing = names.filter((n) => !(n in mod));
    expect(missing).toEqual([]);
    const kindMismatch = names.filter((n) => typeof pi[n] !== typeof mod[n]).map((n) => `${n}: ${typeof pi[n]} vs ${typeof mod[n]}`);
    expect(kindMismatch).toEqual([]);
  });

  it("has pi's constants", () => {
    for (const name of ["VERSION", "CURRENT_SESSION_VERSION", "DEFAULT_MAX_BYTES", "DEFAULT_MAX_LINES", "DEFAULT_COMPACTION_SETTINGS"]) {
      expect(mod[name]).toEqual(pi[name]);
    }
  });

  it("VERSION is pi 0.73.1's under @mariozechner, the newest pi's (installed as pi-newest) under @earendil-works; the rest is one module", async () => {
    const newest = (await import("../src/extensions/compat/pi-coding-agent-newest.js")) as unknown as Record<string, unknown>;
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, "../../../node_modules/pi-newest/package.json"), "utf8")) as { version: string };
    expect(mod.VERSION).toBe(pi.VERSION);
    expect(newest.VERSION).toBe(version);
    expect(NEWEST_PI_VERSION).toBe(version);
    expect(Object.keys(newest).sort()).toEqual(Object.keys(mod).sort());
    expect(Object.keys(mod).filter((name) => name !== "VERSION" && newest[name] !== mod[name])).toEqual([]);
  });

  it("an extension loaded in-process gets each package name's VERSION", async () => {
    const loaded = await loadExtension(join(import.meta.dirname, "fixtures/agent/versions.js"));
    if (!("factory" in loaded)) throw new Error(loaded.error);
    const harness = await serveScripted([], [loaded.factory]);
    try {
      expect((await harness.request({ type: "prompt", message: "/versions" }))["success"]).toBe(true);
      const note = harness.transport.sent.find((r) => r["type"] === "extension_ui_request" && r["method"] === "notify");
      expect(JSON.parse(String(note?.["message"]))).toEqual({ old: "0.73.1", newest: NEWEST_PI_VERSION, sameOtherwise: true, session: 3 });
    } finally {
      harness.transport.sink?.end();
      await harness.server.closed;
    }
  });

  it("defineTool is the identity", () => {
    const tool = {
      name: "t",
      label: "T",
      description: "d",
      parameters: Type.Object({ x: Type.String() }),
      async execute(_id: string, params: { x: string }) {
        return { content: [{ type: "text" as const, text: params.x }], details: undefined };
      },
    };
    expect(compat.defineTool(tool)).toBe(tool);
  });

  it("tool factories are parley's", () => {
    expect(compat.createReadTool).toBe(parleyCreateReadTool);
    expect(compat.createCodingTools("/tmp").map((t) => t.name)).toEqual(["read", "bash", "edit", "write"]);
  });

  it("getAgentDir is pi's: PI_CODING_AGENT_DIR, else ~/.pi/agent", () => {
    const old = process.env.PI_CODING_AGENT_DIR;
    try {
      delete process.env.PI_CODING_AGENT_DIR;
      expect(compat.getAgentDir()).toBe(join(homedir(), ".pi", "agent"));
      process.env.PI_CODING_AGENT_DIR = "/x/y";
      expect(compat.getAgentDir()).toBe("/x/y");
      process.env.PI_CODING_AGENT_DIR = "~/p";
      expect(compat.getAgentDir()).toBe(join(homedir(), "p"));
    } finally {
      if (old === undefined) delete process.env.PI_CODING_AGENT_DIR;
      else process.env.PI_CODING_AGENT_DIR = old;
    }
  });

  it("withFileMutationQueue serialises per path", async () => {
    const order: string[] = [];
    const file = join(scratch, "f");
    await Promise.all([
      compat.withFileMutationQueue(file, async () => {
        await new Promise((r) => setTimeout(r, 20));
        order.push("first");
      }),
      compat.withFileMutationQueue(file, async () => {
        order.push("second");
      }),
    ]);
    expect(order).toEqual(["first", "second"]);
  });

  it("a class extending CustomEditor can be constructed without a terminal", () => {
    class ModalEditor extends compat.CustomEditor {
      mode = "insert";
      override handleInput(data: string): void {
        if (data === "\x1b") this.mode = "normal";
        else super.handleInput(data);
      }
    }
    const fakeTui = { requestRender() {} } as never;
    const keybindings = { matches: (data: string, action: never) => data === "\x03" && action === "app.interrupt" };
    const editor = new ModalEditor(fakeTui, { borderColor: (s: string) => s, selectList: compat.getSelectListTheme() }, keybindings);
    editor.handleInput("h");
    editor.handleInput("i");
    editor.handleInput("\x1b");
    expect(editor.getText()).toBe("hi");
    expect(editor.mode).toBe("normal");
    let fired = 0;
    editor.onAction("app.interrupt", () => fired++);
    editor.handleInput("\x03");
    expect(fired).toBe(1);
    expect(editor.getText()).toBe("hi");
  });

  it("DynamicBorder and the theme helpers render plain text", () => {
    expect(new compat.DynamicBorder().render(3)).toEqual(["\u2500\u2500\u2500"]);
    const theme = new compat.Theme();
    expect(theme.fg("accent", "x") + theme.bg("selectedBg", "y") + theme.bold("z")).toBe("xyz");
    const settings = compat.getSettingsListTheme();
    expect(settings.label("a", true)).toBe("a");
    expect(compat.getMarkdownTheme().heading("h")).toBe("h");
    expect(compat.getLanguageFromPath("src/a.ts")).toBe("typescript");
    expect(compat.getLanguageFromPath("Makefile")).toBe("makefile");
    expect(compat.rawKeyHint("ctrl+x", "to exit")).toBe("ctrl+x to exit");
    expect(() => compat.initTheme()).not.toThrow();
  });

  it("interactive-only exports throw a clear message when used", async () => {
    expect(() => new compat.FooterComponent()).toThrow("FooterComponent is not available in parley (RPC mode has no terminal UI)");
    expect(() => new compat.InteractiveMode()).toThrow("InteractiveMode is not available in parley (RPC mode has no terminal UI)");
    await expect(compat.copyToClipboard("x")).rejects.toThrow("copyToClipboard is not available in parley (RPC mode has no terminal UI)");
    // pi internals: same shape of message, different reason.
    expect(() => new compat.SessionManager()).toThrow(/^SessionManager is not available in parley \(/);
    expect(() => compat.SessionManager.inMemory()).toThrow(/^SessionManager\.inMemory is not available in parley \(/);
    await expect(compat.createAgentSession()).rejects.toThrow(/^createAgentSession is not available in parley \(/);
    expect(() => compat.loadSkills()).toThrow(/^loadSkills is not available in parley \(/);
    // Subclassing a stand-in is allowed; only constructing fails.
    class MyFooter extends compat.FooterComponent {}
    expect(() => new MyFooter()).toThrow(/FooterComponent is not available in parley/);
  });

  it("createEventBus delivers, unsubscribes and isolates failing handlers", () => {
    const bus = compat.createEventBus();
    const got: unknown[] = [];
    const off = bus.on("c", (d) => got.push(d));
    bus.on("c", () => {
      throw new Error("boom");
    });
    const origError = console.error;
    console.error = () => {};
    try {
      bus.emit("c", 1);
      off();
      bus.emit("c", 2);
    } finally {
      console.error = origError;
    }
    expect(got).toEqual([1]);
  });

  it("event-type guards narrow by tool name", () => {
    expect(compat.isToolCallEventType("bash", { toolName: "bash" })).toBe(true);
    expect(compat.isBashToolResult({ toolName: "read" })).toBe(false);
    expect(compat.isReadToolResult({ toolName: "read" })).toBe(true);
  });

  it("wrapRegisteredTool passes the runner's context", async () => {
    const seen: unknown[] = [];
    const tool = compat.wrapRegisteredTool(
      {
        definition: {
          name: "t",
          label: "t",
          description: "d",
          parameters: Type.Object({}),
          async execute(_id, _p, _s, _u, ctx) {
            seen.push(ctx);
            return { content: [], details: undefined };
          },
        },
      },
      { createContext: () => "ctx" },
    );
    await tool.execute("id", {});
    expect(seen).toEqual(["ctx"]);
  });
});

describe("compat helpers vs pi 0.73.1", () => {
  const ts = 1_700_000_000_000;
  const usage = { input: 10, output: 5, cacheRead: 100, cacheWrite: 7, totalTokens: 0, cost: {} };
  const messages = [
    { role: "user", content: "hello there", timestamp: ts },
    {
      role: "user",
      content: [
        { type: "text", text: "p1" },
        { type: "image", data: "AAA", mimeType: "image/png" },
        { type: "text", text: "p2" },
      ],
      timestamp: ts,
    },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "hmm" },
        { type: "text", text: "answer" },
        { type: "thinking", thinking: "more" },
        { type: "toolCall", id: "t1", name: "read", arguments: { path: "foo.ts", offset: 3, obj: { a: 1 }, n: null } },
        { type: "toolCall", id: "t2", name: "bash", arguments: { command: "ls\n-la" } },
      ],
      usage,
      stopReason: "toolUse",
      timestamp: ts,
    },
    { role: "toolResult", toolCallId: "t1", toolName: "read", content: [{ type: "text", text: "x".repeat(2100) }], isError: false, timestamp: ts },
    { role: "toolResult", toolCallId: "t2", toolName: "bash", content: [], isError: true, timestamp: ts },
    { role: "bashExecution", command: "ls", output: "a\nb", exitCode: 0, cancelled: false, truncated: false, timestamp: ts },
    { role: "bashExecution", command: "false", output: "", exitCode: 1, cancelled: false, truncated: true, fullOutputPath: "/tmp/x.log", timestamp: ts },
    { role: "bashExecution", command: "sleep", output: "partial", exitCode: undefined, cancelled: true, truncated: false, timestamp: ts },
    { role: "bashExecution", command: "hidden", output: "x", exitCode: 0, cancelled: false, truncated: false, timestamp: ts, excludeFromContext: true },
    { role: "custom", customType: "note", content: "custom text", display: true, timestamp: ts },
    { role: "custom", customType: "note2", content: [{ type: "text", text: "ct" }], display: false, details: { a: 1 }, timestamp: ts },
    { role: "branchSummary", summary: "branch sum", fromId: "abc", timestamp: ts },
    { role: "compactionSummary", summary: "compact sum", tokensBefore: 100, timestamp: ts },
    { role: "somethingElse" },
    { role: "assistant", content: [{ type: "text", text: "" }], timestamp: ts },
  ];

  it("convertToLlm and serializeConversation", () => {
    const mine = compat.convertToLlm(messages);
    expect(mine).toEqual(pi.convertToLlm(messages));
    expect(compat.serializeConversation(mine)).toBe(pi.serializeConversation(pi.convertToLlm(messages)));
    expect(compat.serializeConversation([])).toBe("");
  });

  it("token and compaction helpers", () => {
    for (const m of messages) expect(compat.estimateTokens(m)).toBe(pi.estimateTokens(m));
    expect(compat.calculateContextTokens(usage as never)).toBe(pi.calculateContextTokens(usage));
    expect(compat.calculateContextTokens({ ...usage, totalTokens: 999 } as never)).toBe(999);
    for (const tokens of [100000, 111616, 111617]) {
      expect(compat.shouldCompact(tokens, 128000, compat.DEFAULT_COMPACTION_SETTINGS)).toBe(pi.shouldCompact(tokens, 128000, pi.DEFAULT_COMPACTION_SETTINGS));
    }
    const entries = [
      { type: "message", message: { role: "assistant", usage, stopReason: "stop" } },
      { type: "compaction", id: "a" },
      { type: "message", message: { role: "assistant", usage: { ...usage, input: 1 }, stopReason: "aborted" } },
      { type: "compaction", id: "b" },
    ];
    expect(compat.getLastAssistantUsage(entries)).toEqual(pi.getLastAssistantUsage(entries));
    expect(compat.getLatestCompactionEntry(entries)).toEqual(pi.getLatestCompactionEntry(entries));
    expect(compat.getLatestCompactionEntry([])).toBe(pi.getLatestCompactionEntry([]));
  });

  it("parseFrontmatter / stripFrontmatter", () => {
    const docs = [
      '---\nname: foo\ndescription: "A thing: yes"\ntags:\n  - a\n  - b\nn: 3\nratio: 1.5\nflag: true\n---\nbody here\n',
      "no frontmatter",
      "---\r\nname: x\r\n---\r\nbody",
      "---\nunterminated\nbody",
      "---\n---\nbody",
      "---\nname: x # comment\nlist: [a, 'b c', 3]\nnested:\n  k: v\n  k2: [1]\nmulti: |\n  line1\n  line2\nfolded: >-\n  a\n  b\nempty:\nitems:\n- x\n- y\nobjs:\n  - name: a\n    v: 1\n  - name: b\n---\n\n  body  \n",
    ];
    for (const doc of docs) {
      expect(compat.parseFrontmatter(doc)).toEqual(pi.parseFrontmatter(doc));
      expect(compat.stripFrontmatter(doc)).toBe(pi.stripFrontmatter(doc));
    }
    expect(() => compat.parseFrontmatter("---\nbad: [unclosed\n---\nbody")).toThrow();
  });

  it("createSyntheticSourceInfo and getShellConfig", () => {
    expect(compat.createSyntheticSourceInfo("/x/y.ts", { source: "ext" })).toEqual(pi.createSyntheticSourceInfo("/x/y.ts", { source: "ext" }));
    const full = { source: "ext", scope: "project", origin: "package", baseDir: "/x" } as const;
    expect(compat.createSyntheticSourceInfo("/x/y.ts", full)).toEqual(pi.createSyntheticSourceInfo("/x/y.ts", full));
    expect(compat.getShellConfig()).toEqual(pi.getShellConfig());
  });
});
