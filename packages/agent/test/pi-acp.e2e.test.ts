/**
 * The published ACP adapter `pi-acp` (npm), unchanged, with parley as its `pi` and with pi itself,
 * side by side in the same run: an ACP client (the ACP SDK's ClientSideConnection, the copy pi-acp
 * ships with) runs initialize, new session, set model, a prompt with a tool call, a cancelled
 * prompt, set mode, session list and session load against each, and each step's outcome from
 * parley must equal pi's.
 *
 * pi-acp spawns `pi --mode rpc --no-themes [--session FILE]` (PI_ACP_PI_COMMAND names the binary)
 * and also runs `pi --version` from PATH. Each agent gets a `pi` shim in a temp bin folder that
 * adds the offline provider extension (`-e fixtures/offline-provider.ts`), so both run the same
 * model, and an `npm` that fails, so pi-acp's update check stays offline.
 *
 * pi 0.73.1 (the devDependency) cannot serve pi-acp 0.0.34 on its own: pi-acp asks for
 * `get_available_thinking_levels`, which pi 0.73.1 answers "Unknown command" without the request's
 * id (so ACP `session/new` never answers), and it ends a prompt turn on `agent_settled`, which pi
 * 0.73.1 never emits (so the first prompt never answers). Both came with newer pi, whose package
 * needs Node >= 22.19. pi's shim therefore runs pi 0.73.1 through `fixtures/pi-073-relay.mjs`,
 * which adds exactly those two records computed from pi's own answers; the first test below shows
 * the two gaps on pi 0.73.1 itself, so the relay goes once the devDependency has them.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import type * as Acp from "../../../node_modules/pi-acp/node_modules/@agentclientprotocol/sdk/dist/acp.js";
import { agentWorld, CLI, OFFLINE_PROVIDER, type AgentName } from "./helpers/offline-agents.js";
import { ROOT } from "./helpers/spawn.js";
import { AGENT_CEILING_MS, deadline } from "./helpers/deadline.js";

const acp = (await import(join(ROOT, "node_modules/pi-acp/node_modules/@agentclientprotocol/sdk/dist/acp.js"))) as typeof Acp;
const PI_ACP = join(ROOT, "node_modules/pi-acp/dist/index.js");
const RELAY = join(ROOT, "packages/agent/test/fixtures/pi-073-relay.mjs");
const GATE = join(ROOT, "packages/agent/test/fixtures/acp-gate.ts");

const children: ChildProcessWithoutNullStreams[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const child of children) child.kill("SIGTERM");
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Update kinds in order, runs of the same kind counted once (chunking may differ). */
const kindRuns = (updates: Acp.SessionNotification[]): string[] =>
  updates.map((u) => u.update.sessionUpdate).filter((kind, i, all) => i === 0 || all[i - 1] !== kind);

/** What matters of an update for the comparison: kind, text, tool call title/kind/status. */
function gist(u: Acp.SessionNotification): Record<string, unknown> {
  const update = u.update;
  switch (update.sessionUpdate) {
    case "agent_message_chunk":
    case "user_message_chunk":
    case "agent_thought_chunk":
      return { kind: update.sessionUpdate, text: update.content.type === "text" ? update.content.text : update.content.type };
    case "tool_call":
      return { kind: update.sessionUpdate, title: update.title, toolKind: update.kind, status: update.status };
    case "tool_call_update":
      return { kind: update.sessionUpdate, status: update.status ?? null };
    case "current_mode_update":
      return { kind: update.sessionUpdate, mode: update.currentModeId };
    case "available_commands_update":
      return { kind: update.sessionUpdate, commands: update.availableCommands.map((c) => c.name).sort() };
    default:
      return { kind: update.sessionUpdate };
  }
}

/** Text chunks joined per kind, so that chunk boundaries do not matter. */
function texts(updates: Acp.SessionNotification[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const u of updates) {
    const g = gist(u);
    if (typeof g["text"] === "string") out[String(g["kind"])] = (out[String(g["kind"])] ?? "") + g["text"];
  }
  return out;
}

/** pi-acp's `models` field (unstable ACP, absent from this SDK's types): current and available ids. */
function modelIds(models: unknown): { current: unknown; available: unknown[] } | null {
  if (!models || typeof models !== "object") return null;
  const current = "currentModelId" in models ? models.currentModelId : undefined;
  const list = "availableModels" in models && Array.isArray(models.availableModels) ? (models.availableModels as unknown[]) : [];
  const available = list.map((m) => (m && typeof m === "object" && "modelId" in m ? m.modelId : m));
  return { current, available };
}

/** The config options, models and modes a session response carries, without volatile parts. */
function sessionShape(r: { configOptions?: Acp.SessionConfigOption[] | null; modes?: Acp.SessionModeState | null }) {
  return {
    configOptions: (r.configOptions ?? []).map((o) => ({
      id: o.id,
      current: "currentValue" in o ? o.currentValue : undefined,
      options: "options" in o && Array.isArray(o.options) ? o.options.map((x) => ("value" in x ? x.value : "group")) : undefined,
    })),
    models: modelIds("models" in r ? r.models : undefined),
    modes: r.modes ? { current: r.modes.currentModeId, available: r.modes.availableModes.map((m) => m.id) } : null,
  };
}

/**
 * pi-acp in a private world, starting `agent` (through a `pi` shim on PATH) with these
 * extensions; the world's folders are removed and the child killed after the file.
 */
function startPiAcp(agent: AgentName, prefix: string, extensions: string[]): { cwd: string; child: ChildProcessWithoutNullStreams } {
  const { base, cwd, env } = agentWorld(prefix);
  dirs.push(base);
  const bin = join(base, "bin");
  mkdirSync(bin);
  const shim = join(bin, "pi");
  const relay = agent === "pi" ? `'${RELAY}' ` : "";
  writeFileSync(shim, `#!/bin/sh\nexec '${process.execPath}' ${relay}'${CLI[agent]}' "$@"${extensions.map((e) => ` -e '${e}'`).join("")}\n`);
  chmodSync(shim, 0o755);
  // pi-acp asks `npm view @earendil-works/pi-coding-agent version` for an update notice: keep the
  // test offline with an `npm` that knows nothing.
  writeFileSync(join(bin, "npm"), "#!/bin/sh\nexit 1\n");
  chmodSync(join(bin, "npm"), 0o755);
  const child = spawn(process.execPath, [PI_ACP], {
    cwd,
    env: { ...process.env, ...env, PATH: `${bin}:${process.env["PATH"] ?? ""}`, PI_ACP_PI_COMMAND: shim },
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.push(child);
  return { cwd, child };
}

/** Runs the whole flow through pi-acp against one agent; returns each step's outcome. */
async function runFlow(agent: AgentName): Promise<Record<string, unknown>> {
  const { cwd, child } = startPiAcp(agent, `piacp-${agent}-`, [OFFLINE_PROVIDER]);
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));

  const updates: Acp.SessionNotification[] = [];
  const waiters = new Set<() => void>();
  const client: Acp.Client = {
    requestPermission: async (params) => {
      const allow = params.options.find((o) => o.kind.startsWith("allow")) ?? params.options[0];
      return { outcome: allow ? { outcome: "selected", optionId: allow.optionId } : { outcome: "cancelled" } };
    },
    sessionUpdate: async (params) => {
      updates.push(params);
      for (const wake of [...waiters]) wake();
    },
  };
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>);
  const connection = new acp.ClientSideConnection(() => client, stream);
  const untilUpdate = (match: (u: Acp.SessionNotification) => boolean, from: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${agent}: no matching session update; stderr: ${stderr.slice(-2000)}`)), deadline(AGENT_CEILING_MS));
      const check = (): void => {
        if (updates.slice(from).some(match)) {
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        }
      };
      waiters.add(check);
      check();
    });
  const since = (from: number): Acp.SessionNotification[] => updates.slice(from);

  const init = await connection.initialize({ protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } });
  const created = await connection.newSession({ cwd, mcpServers: [] });
  const sessionId = created.sessionId;
  // pi-acp sends the session's commands after answering session/new.
  await untilUpdate((u) => u.update.sessionUpdate === "available_commands_update", 0);

  // set model: the offline model both agents share.
  const setModel = await connection.setSessionConfigOption({ sessionId, configId: "model", value: "offline/echo" });

  // A prompt with a tool call.
  const beforeTool = updates.length;
  const toolTurn = await connection.prompt({ sessionId, prompt: [{ type: "text", text: "please use the bash tool" }] });
  const toolUpdates = since(beforeTool).filter((u) => u.update.sessionUpdate.startsWith("tool_call"));

  // A prompt cancelled while its tool runs.
  const beforeCancel = updates.length;
  const sleeping = connection.prompt({ sessionId, prompt: [{ type: "text", text: "please sleep" }] });
  await untilUpdate((u) => u.update.sessionUpdate === "tool_call", beforeCancel);
  await connection.cancel({ sessionId });
  const cancelled = await sleeping;
  const cancelUpdates = since(beforeCancel).filter((u) => u.update.sessionUpdate.startsWith("tool_call"));

  // set mode (pi-acp's modes are thinking levels).
  const beforeMode = updates.length;
  const setMode = await connection.setSessionMode({ sessionId, modeId: "high" });

  // session list and load.
  const listed = await connection.listSessions({ cwd });
  const beforeLoad = updates.length;
  const loaded = await connection.loadSession({ sessionId, cwd, mcpServers: [] });
  const replay = since(beforeLoad);

  child.stdin.end();
  return {
    initialize: init,
    newSession: {
      ...sessionShape(created),
      commands: since(0)
        .filter((u) => u.update.sessionUpdate === "available_commands_update")
        .map(gist),
    },
    setModel: sessionShape(setModel),
    toolTurn: {
      stopReason: toolTurn.stopReason,
      toolCall: toolUpdates.filter((u) => u.update.sessionUpdate === "tool_call").map(gist),
      finalStatus: toolUpdates.map(gist).at(-1),
      texts: texts(since(beforeTool)),
    },
    cancel: {
      stopReason: cancelled.stopReason,
      toolCall: cancelUpdates.filter((u) => u.update.sessionUpdate === "tool_call").map(gist),
      finalStatus: cancelUpdates.map(gist).at(-1),
    },
    setMode: {
      response: setMode,
      updates: since(beforeMode)
        .filter((u) => u.update.sessionUpdate === "current_mode_update")
        .map(gist),
    },
    listSessions: listed.sessions.map((s) => ({ sameSession: s.sessionId === sessionId, cwd: s.cwd === cwd, title: s.title, updatedAt: typeof s.updatedAt })),
    loadSession: {
      ...sessionShape(loaded),
      replayKinds: kindRuns(replay.filter((u) => !["usage_update", "available_commands_update", "session_info_update"].includes(u.update.sessionUpdate))),
      replayTexts: texts(replay),
    },
  };
}

/** A permission request as pi-acp shows an extension dialog: its title and the options' names. */
interface AskedPermission {
  title: string | null | undefined;
  options: string[];
}

/** The reply's last line (pi-acp starts the first reply with its banner, which names the agent's version). */
const lastLine = (text: string): string => text.trim().split("\n").at(-1) ?? "";

/**
 * An extension's confirm that gates the model's bash call (fixtures/acp-gate.ts), through pi-acp:
 * a permission request answered Yes (the tool runs), No (the extension blocks it) and dismissed
 * (cancelled: the extension's cancel value, false, blocks it too).
 */
async function runGatedTools(agent: AgentName): Promise<{ asked: AskedPermission[]; turns: { stopReason: string; toolStatus: unknown; text: string }[] }> {
  const { cwd, child } = startPiAcp(agent, `piacp-ui-${agent}-`, [OFFLINE_PROVIDER, GATE]);
  const updates: Acp.SessionNotification[] = [];
  const asked: AskedPermission[] = [];
  // The user's choices, in order: an option by name, or dismissing the request.
  const choices = ["Yes", "No", "dismiss"];
  const client: Acp.Client = {
    requestPermission: async (params) => {
      asked.push({ title: params.toolCall.title, options: params.options.map((o) => o.name) });
      const option = params.options.find((o) => o.name === choices[asked.length - 1]);
      return { outcome: option ? { outcome: "selected", optionId: option.optionId } : { outcome: "cancelled" } };
    },
    sessionUpdate: async (params) => {
      updates.push(params);
    },
  };
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>);
  const connection = new acp.ClientSideConnection(() => client, stream);
  await connection.initialize({ protocolVersion: 1, clientCapabilities: {} });
  const { sessionId } = await connection.newSession({ cwd, mcpServers: [] });
  const turns: { stopReason: string; toolStatus: unknown; text: string }[] = [];
  for (let i = 0; i < choices.length; i++) {
    const from = updates.length;
    const { stopReason } = await connection.prompt({ sessionId, prompt: [{ type: "text", text: "please use the bash tool" }] });
    const tool = updates.slice(from).filter((u) => u.update.sessionUpdate === "tool_call_update" && !String(u.update.toolCallId).startsWith("pi-ui-"));
    turns.push({ stopReason, toolStatus: tool.map(gist).at(-1), text: lastLine(texts(updates.slice(from))["agent_message_chunk"] ?? "") });
  }
  child.stdin.end();
  return { asked, turns };
}

/** pi 0.73.1 alone, on the two records pi-acp needs: the reason its shim goes through the relay. */
async function pi073Gaps(): Promise<{ levelsAnswer: Record<string, unknown> | undefined; settled: boolean }> {
  const base = mkdtempSync(join(tmpdir(), "piacp-gaps-"));
  dirs.push(base);
  const home = join(base, "home");
  mkdirSync(join(home, ".pi", "agent"), { recursive: true });
  const child = spawn(process.execPath, [CLI.pi, "--mode", "rpc", "--no-themes", "-e", OFFLINE_PROVIDER], {
    cwd: base,
    env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent") },
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.push(child);
  const records: Record<string, unknown>[] = [];
  let buffer = "";
  const wake = new Set<() => void>();
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
      records.push(JSON.parse(buffer.slice(0, at)) as Record<string, unknown>);
      buffer = buffer.slice(at + 1);
    }
    for (const w of [...wake]) w();
  });
  const until = (match: (r: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("pi 0.73.1 did not answer")), 120_000);
      const check = (): void => {
        const found = records.find(match);
        if (found) {
          clearTimeout(timer);
          wake.delete(check);
          resolve(found);
        }
      };
      wake.add(check);
      check();
    });
  child.stdin.write(`${JSON.stringify({ id: "levels", type: "get_available_thinking_levels" })}\n`);
  child.stdin.write(`${JSON.stringify({ id: "after", type: "get_state" })}\n`);
  // Commands are answered in order: once "after" is answered, any answer to "levels" has come.
  await until((r) => r["id"] === "after");
  const levelsAnswer = records.find((r) => r["command"] === "get_available_thinking_levels");
  child.stdin.write(`${JSON.stringify({ id: "run", type: "prompt", message: "Reply with just: done" })}\n`);
  await until((r) => r["type"] === "agent_end");
  // Anything pi sends after agent_end arrives before the answer to a later command.
  child.stdin.write(`${JSON.stringify({ id: "last", type: "get_state" })}\n`);
  await until((r) => r["id"] === "last");
  child.stdin.end();
  return { levelsAnswer, settled: records.some((r) => r["type"] === "agent_settled") };
}

describe("pi-acp (npm) against parley and against pi, side by side", () => {
  it("pi 0.73.1 alone answers get_available_thinking_levels without its id and emits no agent_settled (why pi's side needs the relay)", async () => {
    const gaps = await pi073Gaps();
    expect(gaps.levelsAnswer).toEqual({
      type: "response",
      command: "get_available_thinking_levels",
      success: false,
      error: "Unknown command: get_available_thinking_levels",
    });
    expect(gaps.settled).toBe(false);
  }, 240_000);

  it("initialize, new session, set model, a tool call, cancel, set mode, list and load: each step as with pi", async () => {
    const [pi, parley] = await Promise.all([runFlow("pi"), runFlow("parley")]);
    for (const step of Object.keys(pi)) expect({ step, outcome: parley[step] }).toEqual({ step, outcome: pi[step] });
    // The flow did what it is meant to (so that equal outcomes are not equal failures).
    expect(pi).toMatchObject({
      setModel: { configOptions: expect.arrayContaining([expect.objectContaining({ id: "model", current: "offline/echo" })]) },
      toolTurn: { stopReason: "end_turn", toolCall: [{ kind: "tool_call", title: "echo tool-ok", status: "pending" }], finalStatus: { status: "completed" } },
      cancel: { stopReason: "cancelled" },
      listSessions: [{ sameSession: true, cwd: true }],
      loadSession: { modes: { current: "high" } },
    });
    expect(pi["toolTurn"]).toMatchObject({ texts: { agent_message_chunk: expect.stringContaining("tool said: tool-ok") } });
  }, 300_000);

  it("an extension's confirm gating a tool call, through pi-acp: a permission request answered Yes, No and dismissed, as with pi", async () => {
    const [pi, parley] = await Promise.all([runGatedTools("pi"), runGatedTools("parley")]);
    expect(parley).toEqual(pi);
    // The flow did what it is meant to: the tool ran once, then was blocked twice.
    expect(pi.asked).toEqual(Array.from({ length: 3 }, () => ({ title: "Run this command?", options: ["Yes", "No"] })));
    expect(pi.turns.map((t) => [t.stopReason, t.toolStatus])).toEqual([
      ["end_turn", { kind: "tool_call_update", status: "completed" }],
      ["end_turn", { kind: "tool_call_update", status: "failed" }],
      ["end_turn", { kind: "tool_call_update", status: "failed" }],
    ]);
    expect(pi.turns[0]?.text).toContain("tool said: tool-ok");
  }, 300_000);
});
