/**
 * The client against both real agents, spawned offline over real pipes: parley (built:
 * `npx tsc -b`) and the reference pi 0.73.1. Each agent gets a private HOME (and pi its
 * PI_CODING_AGENT_DIR under it) so no user configuration, extension or session leaks in.
 * Every scenario pi supports runs against both; the parley additions run against parley only.
 */
import { expectOutbound } from "../../agent/test/helpers/outbound-schema.js";
import { AGENT_CEILING_MS, deadline } from "../../agent/test/helpers/deadline.js";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  ConnectionClosedError,
  type DialogEndedError,
  RpcClient,
  UiStore,
  detectCapabilities,
  spawnTransport,
  type AgentRecord,
  type DialogMethod,
  type ProcessTransport,
} from "../src/index.js";
import { RecordingTransport } from "./helpers/recording-transport.js";
import { quietFor } from "../../agent/test/helpers/waits.js";

const ROOT = resolve(import.meta.dirname, "../../..");
const TIMED = join(ROOT, "packages/client/test/fixtures/timed-dialog.ts");

interface DialogScenario {
  command: string;
  method: DialogMethod;
  answer: string | boolean;
  /** The extension's notify once it got the answer. */
  note: string;
}

interface AgentSpec {
  name: "parley" | "pi";
  bin: string;
  demo: string;
  commands: string[];
  dialogs: DialogScenario[];
  /** What the demo's session_start leaves in the store. */
  startup: { title: string; statuses: Record<string, string>; widgetKey: string };
  /** A command that sets the editor text, and the text. */
  prefill: { command: string; text: string };
  capabilities: { uiState: boolean; dismissRecords: boolean };
}

const AGENTS: AgentSpec[] = [
  {
    name: "parley",
    bin: join(ROOT, "node_modules/.bin/parley"),
    demo: join(ROOT, "examples/extensions/rpc-demo.ts"),
    commands: ["demo-select", "demo-confirm", "demo-input", "demo-editor", "client-timed"],
    dialogs: [
      { command: "/demo-select", method: "select", answer: "green", note: "select: green" },
      { command: "/demo-confirm", method: "confirm", answer: true, note: "confirm: true" },
      { command: "/demo-input", method: "input", answer: "Ada\u2028Lovelace", note: "input: Ada\u2028Lovelace" },
      { command: "/demo-editor", method: "editor", answer: "a\nb\nc", note: "editor: 3 lines" },
    ],
    startup: { title: "parley demo (startup)", statuses: { "rpc-demo": "ready" }, widgetKey: "rpc-demo" },
    prefill: { command: "/demo-prefill from the client test", text: "from the client test" },
    capabilities: { uiState: true, dismissRecords: true },
  },
  {
    name: "pi",
    bin: join(ROOT, "node_modules/@mariozechner/pi-coding-agent/dist/cli.js"),
    demo: join(ROOT, "node_modules/@mariozechner/pi-coding-agent/examples/extensions/rpc-demo.ts"),
    commands: ["rpc-input", "rpc-editor", "rpc-prefill", "client-timed"],
    dialogs: [
      { command: "/rpc-input", method: "input", answer: "Ada\u2028Lovelace", note: "You entered: Ada\u2028Lovelace" },
      { command: "/rpc-editor", method: "editor", answer: "a\nb\nc", note: "Editor submitted (3 lines)" },
    ],
    startup: { title: "pi RPC Demo", statuses: { "rpc-demo": "Turns: 0" }, widgetKey: "rpc-demo" },
    prefill: { command: "/rpc-prefill", text: "This text was set by the rpc-demo extension." },
    capabilities: { uiState: false, dismissRecords: false },
  },
];

interface Started {
  name: string;
  client: RpcClient;
  process: ProcessTransport;
  recorder: RecordingTransport;
  records: AgentRecord[];
}

const running: Started[] = [];

function start(agent: AgentSpec): Started {
  const home = mkdtempSync(join(tmpdir(), `parley-client-${agent.name}-`));
  const process_ = spawnTransport(agent.bin, ["--mode", "rpc", "--no-session", "-e", agent.demo, "-e", TIMED], {
    cwd: home,
    env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent") },
  });
  const recorder = new RecordingTransport(process_);
  const client = new RpcClient(recorder);
  const records: AgentRecord[] = [];
  client.onAny((r) => records.push(r));
  const started = { name: agent.name, client, process: process_, recorder, records };
  running.push(started);
  return started;
}

afterEach(async () => {
  const ended = running.splice(0);
  for (const { process: p } of ended) {
    p.kill("SIGKILL");
    await p.closed;
  }
  // Every record parley wrote fits the published outbound JSON Schema (pi's are its own).
  for (const { name, records } of ended) if (name === "parley") expectOutbound(records, "parley");
});

/** The next record matching `match` (test-side wait, bounded so a failure is reported, not hung). */
function next(client: RpcClient, match: (r: AgentRecord) => boolean, ms = AGENT_CEILING_MS): Promise<AgentRecord> {
  ms = deadline(Math.max(ms, AGENT_CEILING_MS));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`no matching record within ${ms} ms`));
    }, ms);
    const sub = client.onAny((r) => {
      if (!match(r)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(r);
    });
  });
}

const isNotify = (r: AgentRecord): boolean => r.type === "extension_ui_request" && r["method"] === "notify";

describe.each(AGENTS)("against $name", (agent) => {
  it("getState and getCommands", async () => {
    const { client } = start(agent);
    await client.ready;
    expect(client.state).toBe("open");
    const state = await client.getState();
    expect(state).toMatchObject({ isStreaming: false, isCompacting: false, steeringMode: "one-at-a-time", followUpMode: "one-at-a-time" });
    expect(typeof state.sessionId).toBe("string");
    const commands = await client.getCommands();
    expect(commands.map((c) => c.name)).toEqual(expect.arrayContaining(agent.commands));
    expect(commands.every((c) => c.source === "extension")).toBe(true);
  });

  it("capability detection", async () => {
    const { client } = start(agent);
    const caps = await detectCapabilities(client);
    expect({ uiState: caps.uiState, dismissRecords: caps.dismissRecords }).toEqual(agent.capabilities);
    // The probe left the connection usable (pi answers it without an id).
    expect((await client.getState()).isStreaming).toBe(false);
    expect(client.pendingRequests).toBe(0);
  });

  it("dialogs answered through client.ui.handle, one response each", async () => {
    const { client, recorder } = start(agent);
    const answers = new Map(agent.dialogs.map((d) => [d.method, d.answer]));
    client.ui.handle("select", (req) => {
      expect(req.options).toEqual(["red", "green", "blue"]);
      return answers.get("select") as string;
    });
    client.ui.handle("confirm", () => answers.get("confirm") as boolean);
    client.ui.handle("input", async () => answers.get("input") as string);
    client.ui.handle("editor", async (req) => {
      expect(req.prefill).toContain("\n");
      return answers.get("editor") as string;
    });
    for (const dialog of agent.dialogs) {
      const note = next(client, isNotify);
      await client.prompt(dialog.command); // a /command's response follows the command's end
      expect((await note)["message"], dialog.command).toBe(dialog.note);
    }
    const responses = recorder.uiResponses();
    expect(responses).toHaveLength(agent.dialogs.length);
    expect(new Set(responses.map((r) => r["id"])).size).toBe(agent.dialogs.length);
    expect(client.ui.pending()).toEqual([]);
  });

  it("a dialog without a handler is answered cancelled", async () => {
    const { client, recorder } = start(agent);
    const dialog = agent.dialogs.find((d) => d.method === "input")!;
    const note = next(client, isNotify);
    await client.prompt(dialog.command);
    expect((await note)["message"]).toBe(agent.name === "parley" ? "input: cancelled" : "Input cancelled");
    expect(recorder.uiResponses()).toEqual([{ type: "extension_ui_response", id: expect.any(String), cancelled: true }]);
  });

  it("fire-and-forget records fold into the UiStore", async () => {
    const { client } = start(agent);
    const store = await UiStore.attach(client);
    // The startup records (written before the client asked anything) are there either way:
    // parley through the get_ui_state snapshot, pi by folding the records as they came.
    await expect.poll(() => store.state.title).toBe(agent.startup.title);
    expect(store.state.statuses).toEqual(agent.startup.statuses);
    expect(Object.keys(store.state.widgets)).toEqual([agent.startup.widgetKey]);
    expect(store.state.widgets[agent.startup.widgetKey]?.placement).toBe("aboveEditor");
    await client.prompt(agent.prefill.command);
    expect(store.state.editorText).toBe(agent.prefill.text);
    if (agent.name === "parley") {
      await client.prompt("/demo-widgets");
      expect(store.state.widgets["demo-below"]).toEqual({ lines: ["below the editor", "(second line)"], placement: "belowEditor" });
      await client.prompt("/demo-notify");
      expect(store.state.notifications.slice(-3).map((n) => n.notifyType)).toEqual(["info", "warning", "error"]);
      // The store and parley's own fold agree.
      const { pendingDialogs: _, ...snapshot } = await client.getUiState();
      expect(store.state).toEqual(snapshot);
    } else {
      expect(store.state.notifications.at(-1)).toEqual({ message: "Editor prefilled", notifyType: "info" });
    }
  });

  it("a timed dialog whose handler never answers: the signal fires at the deadline, no response is written", async () => {
    const { client, recorder, records } = start(agent);
    const timeout = 400;
    let onFired!: (value: { reason: DialogEndedError; afterMs: number }) => void;
    const fired = new Promise<{ reason: DialogEndedError; afterMs: number }>((resolve) => (onFired = resolve));
    client.ui.handle("confirm", (request, signal) => {
      expect(request.timeout).toBe(timeout);
      const received = Date.now();
      return new Promise<boolean>((_resolve, reject) => {
        signal.addEventListener("abort", () => {
          onFired({ reason: signal.reason as DialogEndedError, afterMs: Date.now() - received });
          reject(signal.reason);
        });
      });
    });
    const errors: unknown[] = [];
    client.onError((e) => errors.push(e));
    const note = next(client, isNotify);
    await client.prompt(`/client-timed ${timeout}`);
    expect((await note)["message"]).toBe("client-timed: false"); // the agent's default
    // The agent's clock started before ours, so its outcome may arrive before our deadline.
    const { reason, afterMs } = await fired;
    // pi: the client's own deadline. parley: its extension_ui_dismissed (reason timeout) usually comes first.
    expect(agent.name === "pi" ? ["timeout"] : ["timeout", "dismissed"]).toContain(reason.reason);
    // Not early: the client's deadline starts when it reads the request, our clock only once the
    // handler runs (later by however long a loaded machine takes: 397 ms was seen for 400), so the
    // bound is loose; what it rules out is a signal that fires at once.
    expect(afterMs).toBeGreaterThanOrEqual(timeout / 2);
    // No answer may follow the dialog's end: watch a while for one.
    await quietFor(1000);
    expect(recorder.uiResponses()).toEqual([]);
    expect(errors).toEqual([]);
    expect(records.filter((r) => r.type === "extension_ui_error")).toEqual([]);
  });

  it("close(): the agent gets EOF and exits 0; pending requests reject with ConnectionClosedError; open dialogs end", async () => {
    const { client, process: p } = start(agent);
    await client.ready;
    const dialogEnded = new Promise<string>((resolve) =>
      client.ui.onDialog((d) => d.signal.addEventListener("abort", () => resolve((d.signal.reason as DialogEndedError).reason))),
    );
    const opened = next(client, (r) => r.type === "extension_ui_request" && r["method"] === "input");
    const pending = client.prompt(agent.dialogs.find((d) => d.method === "input")!.command).catch((e: unknown) => e);
    await opened;
    await client.close();
    expect(client.state).toBe("closed");
    expect(await pending).toBeInstanceOf(ConnectionClosedError);
    await expect(dialogEnded).resolves.toBe("closed");
    expect(await client.closed).toMatchObject({ reason: "local", exitCode: 0, signal: null });
    expect(p.child.exitCode).toBe(0);
    await expect(client.getState()).rejects.toBeInstanceOf(ConnectionClosedError);
  });

  it("the agent dying rejects pending requests with its exit details", async () => {
    const { client, process: p } = start(agent);
    await client.ready;
    client.ui.onDialog(() => {}); // leave the dialog open, so the prompt stays pending
    const opened = next(client, (r) => r.type === "extension_ui_request" && r["method"] === "input");
    const pending = client.prompt(agent.dialogs.find((d) => d.method === "input")!.command);
    await opened;
    p.kill("SIGKILL"); // a crash: on SIGTERM parley shuts down cleanly and answers the prompt
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect(error).toMatchObject({ reason: "remote", exitCode: null, signal: "SIGKILL" });
    expect(await client.closed).toMatchObject({ reason: "remote", signal: "SIGKILL" });
    expect(client.state).toBe("closed");
  });
});

describe("parley additions", () => {
  const parley = AGENTS[0]!;

  it("extension_ui_dismissed fires the handler's signal before any deadline; no response is written", async () => {
    const { client, recorder, records } = start(parley);
    let reason: DialogEndedError | undefined;
    client.ui.handle(
      "input",
      (_request, signal) =>
        new Promise<string>((resolve) =>
          signal.addEventListener("abort", () => {
            reason = signal.reason as DialogEndedError;
            resolve("too late"); // dropped: the dialog has ended
          }),
        ),
    );
    const note = next(client, isNotify);
    await client.prompt("/demo-abort 200");
    expect((await note)["message"]).toBe("abort: withdrawn by the extension");
    expect(reason).toMatchObject({ reason: "dismissed", dismissReason: "aborted" });
    // No answer may follow the dialog's end: watch a while for one.
    await quietFor(1000);
    expect(recorder.uiResponses()).toEqual([]);
    expect(records.filter((r) => r.type === "extension_ui_error")).toEqual([]);
  });

  it("get_ui_state lists an open dialog with its remaining time; the client answers it once", async () => {
    const { client } = start(parley);
    client.ui.onDialog(() => {}); // the first client leaves it open
    const opened = next(client, (r) => r.type === "extension_ui_request" && r["method"] === "confirm");
    const note = next(client, isNotify);
    const prompt = client.prompt("/demo-timed 5000");
    await opened;
    const [dialog] = client.ui.pending();
    expect(dialog?.deadline).toBeDefined();
    const data = await client.getUiState();
    expect(data.pendingDialogs).toHaveLength(1);
    expect(data.pendingDialogs[0]?.remainingMs).toBeLessThanOrEqual(5000);
    expect(client.ui.pending()).toHaveLength(1); // the snapshot did not open it twice
    expect(dialog?.method === "confirm" && dialog.answer(true)).toBe(true);
    await prompt;
    expect((await note)["message"]).toBe("timed confirm: true");
  });
});
