/**
 * The ACP front door's races and edges, through the spawned CLI and the ACP SDK's own client
 * (which checks every message it receives against the ACP schema): a cancel followed at once by
 * the client's "cancelled" answer, a session loaded by another process before its first prompt,
 * what a dialog's permission request carries, relative folders, and --no-session.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { WAIT_MS, acpStarter, openSession, promptText, scriptWorkspace } from "./helpers/acp-client.js";
import { DEMO, PARLEY_BIN, ROOT } from "./helpers/spawn.js";

const GATE = join(ROOT, "packages/agent/test/fixtures/acp-gate.ts");
const ACPX_BIN = join(ROOT, "node_modules/.bin/acpx");
const TEST_MS = 180_000;

const start = acpStarter();

const workspace = (script: unknown[]) => scriptWorkspace("parley-acp-door-", script);

const newSession = openSession;

const prompt = promptText;

/** The JSON-RPC error code a rejected request carries. */
async function errorCode(request: Promise<unknown>): Promise<number | undefined> {
  try {
    await request;
    return undefined;
  } catch (error) {
    return typeof error === "object" && error !== null && "code" in error && typeof error.code === "number" ? error.code : undefined;
  }
}

describe("parley --mode acp: races and edges", () => {
  it(
    "session/cancel followed at once by the client's cancelled answer to the open permission request: the turn ends cancelled, every time",
    async () => {
      const RUNS = 25;
      const bash = { toolCalls: [{ name: "bash", arguments: { command: "echo never-ran" } }] };
      const ws = workspace(Array.from({ length: RUNS * 3 }, () => bash));
      const h = await start(["--no-session", "-e", GATE, "--model-script", ws.script], { cwd: ws.dir });
      const session = await newSession(h, ws.dir);
      // What acpx's runtime does on cancel: the notification, then "cancelled" for every open request.
      h.onPermission = async () => {
        await h.agent.notify("session/cancel", { sessionId: session.sessionId });
        return { outcome: { outcome: "cancelled" } };
      };
      const reasons: string[] = [];
      for (let run = 0; run < RUNS; run++) reasons.push((await prompt(h, session.sessionId, `run ${run}`)).stopReason);
      expect(reasons).toEqual(Array.from({ length: RUNS }, () => "cancelled"));
      const outputs = h.updates.filter((n) => JSON.stringify(n.update).includes("never-ran\\n"));
      expect(outputs).toEqual([]);
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );

  it(
    "session/cancel followed at once by the client's cancelled answer to a command's dialog: the turn ends cancelled, every time",
    async () => {
      const RUNS = 25;
      const ws = workspace(["unused"]);
      const h = await start(["--no-session", "-e", DEMO, "--model-script", ws.script], { cwd: ws.dir });
      const session = await newSession(h, ws.dir);
      h.onPermission = async () => {
        await h.agent.notify("session/cancel", { sessionId: session.sessionId });
        return { outcome: { outcome: "cancelled" } };
      };
      const reasons: string[] = [];
      for (let run = 0; run < RUNS; run++) reasons.push((await prompt(h, session.sessionId, run % 2 === 0 ? "/demo-confirm" : "/demo-select")).stopReason);
      expect(reasons).toEqual(Array.from({ length: RUNS }, () => "cancelled"));
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );

  it(
    "a session created and never prompted is loaded, resumed and prompted by a new process under the same id",
    async () => {
      const ws = workspace(["first reply", "second reply"]);
      const args = ["--model-script", ws.script, "--session-dir", ws.sessions];
      const first = await start(args, { cwd: ws.dir, home: ws.home });
      const made = await newSession(first, ws.dir);
      // A second session of the same process, too (made with an agent of its own).
      const second = await newSession(first, ws.dir);
      expect(await first.close()).toEqual({ code: 0 });

      const again = await start(args, { cwd: ws.dir, home: ws.home });
      const listed = (await again.agent.request("session/list", { cwd: ws.dir })).sessions.map((s) => s.sessionId);
      expect(listed.sort()).toEqual([made.sessionId, second.sessionId].sort());
      await again.agent.request("session/load", { sessionId: made.sessionId, cwd: ws.dir, mcpServers: [] });
      expect((await prompt(again, made.sessionId, "hello")).stopReason).toBe("end_turn");
      await again.agent.request("session/resume", { sessionId: second.sessionId, cwd: ws.dir, mcpServers: [] });
      expect((await prompt(again, second.sessionId, "hello again")).stopReason).toBe("end_turn");
      expect(await again.close()).toEqual({ code: 0 });

      // The replies went to those sessions: a third process replays each under its id.
      const third = await start(args, { cwd: ws.dir, home: ws.home });
      await third.agent.request("session/load", { sessionId: made.sessionId, cwd: ws.dir, mcpServers: [] });
      const replay = JSON.stringify(third.updates.filter((n) => n.sessionId === made.sessionId));
      expect(replay).toContain("first reply");
      expect(replay).not.toContain("second reply");
      expect(await third.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );

  it(
    "acpx: `sessions new`, then a prompt from a new acpx process, goes to that session (its file holds the turn; no other session made)",
    async () => {
      const ws = workspace(["reply through acpx"]);
      const project = join(ws.dir, "project");
      mkdirSync(project, { recursive: true });
      const agent = `${PARLEY_BIN} --mode acp --model-script ${ws.script}`;
      const env = { ...process.env, HOME: ws.home, PI_CODING_AGENT_DIR: join(ws.home, ".pi", "agent") };
      // acpx keeps a queue owner (and so parley) alive while idle: one second here, and closed at the end.
      const acpx = (args: string[]) =>
        spawnSync(ACPX_BIN, ["--ttl", "1", "--agent", agent, ...args], { cwd: project, env, encoding: "utf8", timeout: WAIT_MS });
      const created = acpx(["sessions", "new"]);
      expect(created.status, created.stderr).toBe(0);
      const id = created.stdout.trim().split("\n").at(-1) ?? "";
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const prompted = acpx(["prompt", "hello through acpx"]);
      expect(prompted.status, prompted.stderr).toBe(0);
      expect(prompted.stdout).toContain("reply through acpx");
      const dir = join(ws.home, ".pi", "agent", "sessions");
      const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".jsonl"));
      expect(files).toHaveLength(1);
      expect(files[0]).toContain(id);
      const text = readFileSync(join(dir, files[0] ?? ""), "utf8");
      expect(text).toContain("hello through acpx");
      expect(text).toContain("reply through acpx");
      acpx(["sessions", "close"]);
    },
    TEST_MS,
  );

  it(
    "a dialog shown as a permission request carries its title, kind and message; the card's rawInput is the dialog's question",
    async () => {
      const ws = workspace(["ok"]);
      const h = await start(["--no-session", "-e", DEMO, "--model-script", ws.script], { cwd: ws.dir });
      const session = await newSession(h, ws.dir);
      const asked: acp.RequestPermissionRequest[] = [];
      h.onPermission = (params) => {
        asked.push(params);
        return { outcome: { outcome: "selected", optionId: params.options[0]?.optionId ?? "" } };
      };
      expect((await prompt(h, session.sessionId, "/demo-confirm")).stopReason).toBe("end_turn");
      expect((await prompt(h, session.sessionId, "/demo-select")).stopReason).toBe("end_turn");
      expect(asked).toHaveLength(2);
      for (const request of asked) {
        const call = request.toolCall;
        expect(typeof call.title === "string" && call.title.length > 0, JSON.stringify(call)).toBe(true);
        expect(call.kind).toBe("other");
        const text = (call.content ?? []).map((c) => (c.type === "content" && c.content.type === "text" ? c.content.text : "")).join("");
        expect(text).toContain(call.title ?? "?");
      }
      // The confirm's message is part of what the client shows.
      const cards = h.updates.flatMap((n) => (n.update.sessionUpdate === "tool_call" && n.update.toolCallId.startsWith("dialog-") ? [n.update] : []));
      expect(cards).toHaveLength(2);
      for (const card of cards) {
        const raw = card.rawInput as Record<string, unknown>;
        expect(raw).not.toHaveProperty("type");
        expect(raw).not.toHaveProperty("id");
        expect(raw["title"]).toBe(card.title);
      }
      const confirm = cards.find((c) => (c.rawInput as { dialog?: string }).dialog === "confirm");
      const message = (confirm?.rawInput as { message?: string }).message ?? "";
      expect(message.length).toBeGreaterThan(0);
      const confirmText = JSON.stringify(asked.find((r) => r.toolCall.toolCallId === confirm?.toolCallId)?.toolCall.content);
      expect(confirmText).toContain(JSON.stringify(message).slice(1, -1));
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );

  it(
    "a relative cwd in session/new, load, resume and list is refused with -32602",
    async () => {
      const ws = workspace(["ok"]);
      const h = await start(["--model-script", ws.script, "--session-dir", ws.sessions], { cwd: ws.dir });
      for (const cwd of [".", "sub/dir", ""]) {
        expect(await errorCode(h.agent.request("session/new", { cwd, mcpServers: [] })), cwd).toBe(-32602);
        expect(await errorCode(h.agent.request("session/load", { sessionId: "x", cwd, mcpServers: [] })), cwd).toBe(-32602);
        expect(await errorCode(h.agent.request("session/resume", { sessionId: "x", cwd, mcpServers: [] })), cwd).toBe(-32602);
        expect(await errorCode(h.agent.request("session/list", { cwd })), cwd).toBe(-32602);
      }
      // The absolute folder still works after the refusals.
      const session = await newSession(h, ws.dir);
      expect((await prompt(h, session.sessionId, "hi")).stopReason).toBe("end_turn");
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );

  it(
    "--no-session: loadSession, list and resume are not advertised, nothing stored is listed, and loading a stored session is not an internal error",
    async () => {
      const ws = workspace(["stored reply", "memory reply"]);
      // A stored session of this folder, in pi's default place (under the temp HOME).
      const stored = await start(["--model-script", ws.script], { cwd: ws.dir, home: ws.home });
      const made = await newSession(stored, ws.dir);
      expect((await prompt(stored, made.sessionId, "keep me")).stopReason).toBe("end_turn");
      expect(await stored.close()).toEqual({ code: 0 });

      const h = await start(["--no-session", "--model-script", ws.script], { cwd: ws.dir, home: ws.home });
      const init = await h.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      expect(init.agentCapabilities?.loadSession).toBe(false);
      expect(init.agentCapabilities?.sessionCapabilities?.list ?? undefined).toBeUndefined();
      expect(init.agentCapabilities?.sessionCapabilities?.resume ?? undefined).toBeUndefined();
      expect((await h.agent.request("session/list", {})).sessions).toEqual([]);
      const code = await errorCode(h.agent.request("session/load", { sessionId: made.sessionId, cwd: ws.dir, mcpServers: [] }));
      expect(code).not.toBe(-32603);
      expect(code).toBeDefined();
      // The in-memory session works as before.
      const session = await newSession(h, ws.dir);
      expect((await prompt(h, session.sessionId, "hi")).stopReason).toBe("end_turn");
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );
});
