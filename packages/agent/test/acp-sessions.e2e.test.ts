/**
 * `parley --mode acp` serving several sessions at once, driven by the ACP SDK's own client over
 * the spawned CLI: each session has its own agent, so prompts, dialogs, cancels, modes and
 * models of one session never touch another; a session already open is reused by session/load
 * (one writer per file); session/close and shutdown end every session's agent.
 *
 * Sessions are provably in flight together by waiting on dialogs the test holds open: no test
 * here sleeps or times anything.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { agentText, startAcp, untilWithdrawn, WAIT_MS, type AcpHarness, killedAfterEach, openSession, promptText } from "./helpers/acp-client.js";
import { ROOT } from "./helpers/spawn.js";
import { poll } from "./helpers/waits.js";

const SESSIONS = join(ROOT, "packages/agent/test/fixtures/acp-sessions.ts");
const TEST_MS = 120_000;

const running = killedAfterEach();

interface Workspace {
  dir: string;
  sessions: string;
  log: string;
}

function workspace(): Workspace {
  const dir = mkdtempSync(join(tmpdir(), "parley-acp-sessions-"));
  return { dir, sessions: join(dir, "sessions"), log: join(dir, "extension.log") };
}

async function start(ws: Workspace, extra: string[] = []): Promise<AcpHarness> {
  const args = ["--session-dir", ws.sessions, "-e", SESSIONS, "--provider", "sessions", "--model", "turns", "--greeting", "hello", ...extra];
  const h = await startAcp(args, { cwd: ws.dir, env: { SESSIONS_LOG: ws.log } });
  running.push(h);
  return h;
}

const newSession = async (h: AcpHarness, ws: Workspace): Promise<string> => (await openSession(h, ws.dir)).sessionId;

const prompt = promptText;

/** Permission requests the test answers by hand, by session. */
class HeldDialogs {
  readonly #held = new Map<string, { params: acp.RequestPermissionRequest; answer: (yes: boolean) => void; signal: AbortSignal }>();
  readonly #waiting = new Map<string, () => void>();
  readonly #h: AcpHarness;

  constructor(h: AcpHarness) {
    this.#h = h;
    h.onPermission = (params, signal) =>
      new Promise((resolve) => {
        this.#held.set(params.sessionId, {
          params,
          signal,
          answer: (yes) => resolve({ outcome: { outcome: "selected", optionId: yes ? "yes" : "no" } }),
        });
        this.#waiting.get(params.sessionId)?.();
      });
  }

  /** Resolves once `sessionId` has a dialog open. */
  async opened(sessionId: string): Promise<acp.RequestPermissionRequest> {
    if (!this.#held.has(sessionId)) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `timed out waiting for a dialog in ${sessionId}; updates:\n${this.#h.updates.map((u) => JSON.stringify(u)).join("\n")}\nstderr:\n${this.#h.stderr()}`,
              ),
            ),
          WAIT_MS,
        );
        this.#waiting.set(sessionId, () => {
          clearTimeout(timer);
          this.#waiting.delete(sessionId);
          resolve();
        });
      });
    }
    const held = this.#held.get(sessionId);
    if (!held) throw new Error("unreachable");
    return held.params;
  }

  withdrawn(sessionId: string): boolean {
    return this.#held.get(sessionId)?.signal.aborted === true;
  }

  answer(sessionId: string, yes: boolean): void {
    const held = this.#held.get(sessionId);
    if (!held) throw new Error(`no dialog open in ${sessionId}`);
    this.#held.delete(sessionId);
    held.answer(yes);
  }
}

const updatesOf = (h: AcpHarness, sessionId: string): acp.SessionUpdate[] => h.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);

/** The session file that holds `sessionId` (its header names it). */
function sessionFile(ws: Workspace, sessionId: string): string {
  const files = readdirSync(ws.sessions, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".jsonl"));
  const found = files.find((f) => readFileSync(join(ws.sessions, f), "utf8").split("\n")[0]?.includes(`"id":"${sessionId}"`));
  if (found === undefined) throw new Error(`no session file for ${sessionId}`);
  return join(ws.sessions, found);
}

type Entry = { type?: string; id?: string; parentId?: string | null; message?: { role?: string; content?: unknown } };
const entries = (file: string): Entry[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Entry);

const logLines = (ws: Workspace): string[] => (existsSync(ws.log) ? readFileSync(ws.log, "utf8").split("\n").filter(Boolean) : []);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** parley with two new sessions, A and B, and the dialogs it opens held for the test to answer. */
async function twoSessions(): Promise<{ ws: ReturnType<typeof workspace>; h: AcpHarness; dialogs: HeldDialogs; a: string; b: string }> {
  const ws = workspace();
  const h = await start(ws);
  const dialogs = new HeldDialogs(h);
  const a = await newSession(h, ws);
  const b = await newSession(h, ws);
  return { ws, h, dialogs, a, b };
}

describe("parley --mode acp: several sessions at once", () => {
  it(
    "two session/new run prompts at the same time: each session's updates and file hold its own conversation only; each has its own extension instance",
    async () => {
      const { ws, h, dialogs, a, b } = await twoSessions();
      expect(a).not.toBe(b);
      const turnA = prompt(h, a, "ask alpha");
      const turnB = prompt(h, b, "ask bravo");
      // Both turns wait on their own dialog: both are in flight together.
      expect((await dialogs.opened(a)).sessionId).toBe(a);
      expect((await dialogs.opened(b)).sessionId).toBe(b);
      dialogs.answer(b, true);
      dialogs.answer(a, true);
      expect((await turnA).stopReason).toBe("end_turn");
      expect((await turnB).stopReason).toBe("end_turn");

      expect(agentText(h, a)).toContain("done alpha");
      expect(agentText(h, b)).toContain("done bravo");
      expect(JSON.stringify(updatesOf(h, a))).not.toContain("bravo");
      expect(JSON.stringify(updatesOf(h, b))).not.toContain("alpha");
      expect(h.updates.every((n) => n.sessionId === a || n.sessionId === b)).toBe(true);
      // The extension's factory ran once for each session's runtime; each heard its own dialog.
      expect(logLines(ws).filter((l) => l === "factory")).toHaveLength(2);
      expect(logLines(ws).filter((l) => l.startsWith("dialog "))).toEqual(expect.arrayContaining([`dialog ${a} alpha true`, `dialog ${b} bravo true`]));
      // The command line's extension flag applies to the later session's extensions too.
      expect((await prompt(h, b, "/greeting")).stopReason).toBe("end_turn");
      expect(agentText(h, b)).toContain("[greeting: hello]");

      expect(await h.close()).toEqual({ code: 0 });
      const fileA = readFileSync(sessionFile(ws, a), "utf8");
      const fileB = readFileSync(sessionFile(ws, b), "utf8");
      expect(fileA).toContain("done alpha");
      expect(fileA).not.toContain("bravo");
      expect(fileB).toContain("done bravo");
      expect(fileB).not.toContain("alpha");
      expect(logLines(ws)).toEqual(expect.arrayContaining([`shutdown ${a}`, `shutdown ${b}`]));
    },
    TEST_MS,
  );

  it(
    "a dialog open in one session while another prompts and finishes; answering it completes the first; the same session refuses a second prompt",
    async () => {
      const { h, dialogs, a, b } = await twoSessions();
      const turnA = prompt(h, a, "ask alpha");
      await dialogs.opened(a);
      await expect(prompt(h, a, "hi")).rejects.toThrow(/already running/);
      expect((await prompt(h, b, "hi")).stopReason).toBe("end_turn");
      expect(agentText(h, b)).toContain("ok");
      expect(dialogs.withdrawn(a)).toBe(false);
      dialogs.answer(a, true);
      expect((await turnA).stopReason).toBe("end_turn");
      expect(agentText(h, a)).toContain("done alpha");
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );

  it(
    "session/cancel of one session cancels only it: the other's prompt completes normally",
    async () => {
      const { ws, h, dialogs, a, b } = await twoSessions();
      const turnA = prompt(h, a, "ask alpha");
      const turnB = prompt(h, b, "ask bravo");
      await dialogs.opened(a);
      await dialogs.opened(b);
      await h.agent.notify("session/cancel", { sessionId: a });
      expect((await turnA).stopReason).toBe("cancelled");
      await h.until(() => dialogs.withdrawn(a), "the dialog of the cancelled session withdrawn");
      expect(dialogs.withdrawn(b)).toBe(false);
      dialogs.answer(b, true);
      expect((await turnB).stopReason).toBe("end_turn");
      expect(agentText(h, b)).toContain("done bravo");
      expect(logLines(ws)).toContain(`dialog ${a} alpha false`);
      expect(logLines(ws)).toContain(`dialog ${b} bravo true`);
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );

  it(
    "session/set_mode and session/set_config_option on one session leave the other as it was",
    async () => {
      const { ws, h, a, b } = await twoSessions();
      const before = h.updates.length;
      await h.agent.request("session/set_mode", { sessionId: a, modeId: "high" });
      const setA = await h.agent.request("session/set_config_option", { sessionId: a, configId: "model", value: "parley/offline" });
      expect(setA.configOptions.find((o) => o.id === "model")?.currentValue).toBe("parley/offline");
      await h.until(() => h.updates.slice(before).some((n) => n.sessionId === a && n.update.sessionUpdate === "current_mode_update"), "A's mode update");
      // B's state, as a request on it reports it: its model and thinking level as they were.
      const setB = await h.agent.request("session/set_config_option", { sessionId: b, configId: "thinking", value: "low" });
      expect(setB.configOptions.find((o) => o.id === "model")?.currentValue).toBe("sessions/turns");
      expect(
        h.updates.slice(before).some((n) => n.sessionId === b && n.update.sessionUpdate === "current_mode_update" && n.update.currentModeId === "high"),
      ).toBe(false);
      const loadedB = await h.agent.request("session/load", { sessionId: b, cwd: ws.dir, mcpServers: [] });
      expect(loadedB.modes?.currentModeId).toBe("low");
      const loadedA = await h.agent.request("session/load", { sessionId: a, cwd: ws.dir, mcpServers: [] });
      expect(loadedA.modes?.currentModeId).not.toBe("low");
      expect(loadedA.configOptions?.find((o) => o.id === "model")?.currentValue).toBe("parley/offline");
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );

  it(
    "session/load of an open session reuses its agent (one writer); session/close ends it and a later session/load replays it from its file",
    async () => {
      const { ws, h, a, b } = await twoSessions();
      expect((await prompt(h, a, "first words")).stopReason).toBe("end_turn");
      expect((await prompt(h, b, "other words")).stopReason).toBe("end_turn");

      const from = h.updates.length;
      await h.agent.request("session/load", { sessionId: a, cwd: ws.dir, mcpServers: [] });
      const replayed = h.updates.slice(from).filter((n) => n.sessionId === a);
      expect(replayed.some((n) => n.update.sessionUpdate === "user_message_chunk" && JSON.stringify(n.update.content).includes("first words"))).toBe(true);
      expect((await prompt(h, a, "second words")).stopReason).toBe("end_turn");
      // No second agent opened the file: the factory ran for the two sessions only.
      expect(logLines(ws).filter((l) => l === "factory")).toHaveLength(2);
      // One writer: every entry once, each chained to the one before.
      const file = sessionFile(ws, a);
      const chain = entries(file).slice(1);
      expect(new Set(chain.map((e) => e.id)).size).toBe(chain.length);
      chain.forEach((entry, i) => expect(entry.parentId ?? null).toBe(i === 0 ? null : chain[i - 1]?.id));
      expect(chain.filter((e) => e.message?.role === "user" && JSON.stringify(e.message.content).includes("second words"))).toHaveLength(1);

      // initialize advertised session/close, as the SDK expects of an agent that serves it.
      const initialized = h.lines
        .map((l) => JSON.parse(l) as { result?: { agentCapabilities?: { sessionCapabilities?: Record<string, unknown> } } })
        .find((m) => m.result?.agentCapabilities !== undefined);
      expect(initialized?.result?.agentCapabilities?.sessionCapabilities).toMatchObject({ close: {}, list: {} });
      await h.agent.request("session/close", { sessionId: a });
      expect(logLines(ws)).toContain(`shutdown ${a}`);
      expect(logLines(ws)).not.toContain(`shutdown ${b}`);
      // The closed session is not open any more: a prompt to it would open it again, from its file.
      const again = h.updates.length;
      await h.agent.request("session/load", { sessionId: a, cwd: ws.dir, mcpServers: [] });
      const texts = h.updates
        .slice(again)
        .filter((n) => n.sessionId === a && n.update.sessionUpdate === "user_message_chunk")
        .map((n) => JSON.stringify(n.update));
      expect(texts.some((t) => t.includes("first words"))).toBe(true);
      expect(texts.some((t) => t.includes("second words"))).toBe(true);
      expect(logLines(ws).filter((l) => l === "factory")).toHaveLength(3);
      expect((await prompt(h, b, "b goes on")).stopReason).toBe("end_turn");
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );

  it(
    "stdin closed with two sessions each waiting on a dialog beside a running bash: exit 0, both dialogs resolved once, no child left",
    async () => {
      const { ws, h, dialogs, a, b } = await twoSessions();
      const pidA = join(ws.dir, "a.pid");
      const pidB = join(ws.dir, "b.pid");
      const turnA = prompt(h, a, `hold ${pidA} alpha`).catch(() => undefined);
      const turnB = prompt(h, b, `hold ${pidB} bravo`).catch(() => undefined);
      await dialogs.opened(a);
      await dialogs.opened(b);
      for (const id of [a, b]) {
        await h.until(
          () => updatesOf(h, id).some((u) => u.sessionUpdate === "tool_call_update" && JSON.stringify(u.content ?? []).includes("started")),
          `bash running in ${id}`,
        );
      }
      const pids = [pidA, pidB].map((f) => Number(readFileSync(f, "utf8").trim()));
      for (const pid of pids) expect(alive(pid)).toBe(true);
      h.onPermission = (_params, signal) => untilWithdrawn(signal, { outcome: { outcome: "cancelled" } });

      expect(await h.close(), h.stderr()).toEqual({ code: 0 });
      await Promise.all([turnA, turnB]);
      const answered = logLines(ws).filter((l) => l.startsWith("dialog "));
      expect(answered.sort()).toEqual([`dialog ${a} alpha false`, `dialog ${b} bravo false`].sort());
      expect(logLines(ws)).toEqual(expect.arrayContaining([`shutdown ${a}`, `shutdown ${b}`]));
      // parley's exit ends its children; the kill lands at once, the reaping may trail it.
      for (const pid of pids) await poll(() => !alive(pid), `bash ${pid} gone`);
    },
    TEST_MS,
  );
});

describe("parley --mode acp: an extension starts another pi session inside an ACP session", () => {
  it(
    "ctx.newSession in the first and in a later session: the client's session id keeps reaching the agent, its updates come under that id, and loading the new file reuses the agent",
    async () => {
      const { ws, h, a, b } = await twoSessions();
      for (const id of [a, b]) {
        expect((await prompt(h, id, `before ${id}`)).stopReason).toBe("end_turn");
        expect((await prompt(h, id, "/fresh")).stopReason).toBe("end_turn");
        await poll(() => logLines(ws).includes(`fresh from ${id} made`), `the new session made from ${id}`);
        // The same id still names the session: the prompt runs in the agent's new pi session.
        const from = h.updates.length;
        expect((await prompt(h, id, `after ${id}`)).stopReason).toBe("end_turn");
        expect(
          h.updates.slice(from).some((n) => n.sessionId === id && n.update.sessionUpdate === "agent_message_chunk" && JSON.stringify(n.update).includes("ok")),
        ).toBe(true);
      }
      // The client was never told of other ids: nothing was sent under one.
      expect(h.updates.every((n) => n.sessionId === a || n.sessionId === b)).toBe(true);
      const made = logLines(ws)
        .filter((l) => l.startsWith("new "))
        .map((l) => l.slice(4));
      expect(made).toHaveLength(2);
      for (const [id, fresh] of [
        [a, made[0]],
        [b, made[1]],
      ] as const) {
        expect(fresh).not.toBe(id);
        const file = readFileSync(sessionFile(ws, fresh ?? ""), "utf8");
        expect(file).toContain(`after ${id}`);
        expect(file).not.toContain(`before ${id}`);
        expect(readFileSync(sessionFile(ws, id), "utf8")).not.toContain(`after ${id}`);
      }
      // Listed and loaded by its own id, the new file is the open agent's: no second writer.
      const factories = logLines(ws).filter((l) => l === "factory").length;
      const listed = await h.agent.request("session/list", { cwd: ws.dir });
      expect(listed.sessions.map((s) => s.sessionId)).toEqual(expect.arrayContaining(made));
      const from = h.updates.length;
      await h.agent.request("session/load", { sessionId: made[1] ?? "", cwd: ws.dir, mcpServers: [] });
      expect(
        h.updates.slice(from).some((n) => n.update.sessionUpdate === "user_message_chunk" && JSON.stringify(n.update.content).includes(`after ${b}`)),
      ).toBe(true);
      expect(logLines(ws).filter((l) => l === "factory")).toHaveLength(factories);
      expect((await prompt(h, made[1] ?? "", "loaded words")).stopReason).toBe("end_turn");
      expect(readFileSync(sessionFile(ws, made[1] ?? ""), "utf8")).toContain("loaded words");
      // The old id now names its own file again: a prompt to it opens that file with an agent of its own.
      expect((await prompt(h, b, "b again")).stopReason).toBe("end_turn");
      expect(logLines(ws).filter((l) => l === "factory")).toHaveLength(factories + 1);
      const fileB = readFileSync(sessionFile(ws, b), "utf8");
      expect(fileB).toContain(`before ${b}`);
      expect(fileB).toContain("b again");
      expect(readFileSync(sessionFile(ws, made[1] ?? ""), "utf8")).not.toContain("b again");
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );
});

describe("parley --mode acp: one session's ctx.reload() beside another session's prompt", () => {
  it(
    "each session's requests, and its extension's ctx.modelRegistry calls, go through its own extension instance's provider, not the one registered last",
    async () => {
      const ws = workspace();
      const fixture = join(ROOT, "packages/agent/test/fixtures/acp-shared-provider.ts");
      const h = await startAcp(["--session-dir", ws.sessions, "-e", fixture, "--provider", "shared", "--model", "turns"], {
        cwd: ws.dir,
        env: { SHARED_LOG: ws.log },
      });
      running.push(h);
      const a = await newSession(h, ws);
      const b = await newSession(h, ws);
      const instance = async (id: string): Promise<string> => {
        expect((await prompt(h, id, "/whoami")).stopReason).toBe("end_turn");
        const name = /instance (\w+)/.exec(agentText(h, id))?.[1];
        if (name === undefined) throw new Error(`no instance name in ${agentText(h, id)}`);
        return name;
      };
      const [ia, ib] = [await instance(a), await instance(b)];
      expect(ia).not.toBe(ib);
      expect((await prompt(h, a, "hello from a")).stopReason).toBe("end_turn");
      expect((await prompt(h, b, "hello from b")).stopReason).toBe("end_turn");
      expect(agentText(h, a)).toContain(`ok from ${ia}`);
      expect(agentText(h, a)).not.toContain(`ok from ${ib}`);
      expect(agentText(h, b)).toContain(`ok from ${ib}`);
      // An extension's own call through ctx.modelRegistry reaches its own instance too.
      expect((await prompt(h, a, "/ask-registry")).stopReason).toBe("end_turn");
      expect(agentText(h, a)).toContain(`registry said ok from ${ia}`);
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );

  it(
    "the extension provider both sessions registered keeps answering the other session while the reload is half done, and after the other closes",
    async () => {
      const ws = workspace();
      const armed = join(ws.dir, "gate-armed");
      const open = join(ws.dir, "gate-open");
      const fixture = join(ROOT, "packages/agent/test/fixtures/acp-shared-provider.ts");
      const h = await startAcp(["--session-dir", ws.sessions, "-e", fixture, "--provider", "shared", "--model", "turns"], {
        cwd: ws.dir,
        env: { SHARED_LOG: ws.log, SHARED_GATE_ARMED: armed, SHARED_GATE_OPEN: open },
      });
      running.push(h);
      const a = await newSession(h, ws);
      const b = await newSession(h, ws);
      writeFileSync(armed, "");
      // A's reload drops its extensions' registrations, then waits in the factory: half done.
      const reloading = prompt(h, a, "/reload-me");
      await poll(() => logLines(ws).includes("held"), "session A's reload held in its factory");
      const from = h.updates.length;
      expect((await prompt(h, b, "hello from b")).stopReason).toBe("end_turn");
      const replyB = h.updates
        .slice(from)
        .flatMap((n) => (n.sessionId === b && n.update.sessionUpdate === "agent_message_chunk" ? [JSON.stringify(n.update.content)] : []))
        .join("");
      expect(replyB).toContain("ok");
      expect(replyB).not.toMatch(/error|No API provider/i);
      writeFileSync(open, "");
      expect((await reloading).stopReason).toBe("end_turn");
      expect((await prompt(h, a, "hello from a")).stopReason).toBe("end_turn");
      expect(agentText(h, a)).toContain("ok");
      // A (registered last, by its reload) closes: the provider is B's again (A's instance, ended, would answer nothing).
      await h.agent.request("session/close", { sessionId: a });
      const before = agentText(h, b).length;
      expect((await prompt(h, b, "b again")).stopReason).toBe("end_turn");
      expect(agentText(h, b).slice(before)).toContain("ok");
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );
});

describe("parley --mode acp: more sessions than PARLEY_ACP_MAX_SESSIONS", () => {
  it(
    "the least recently used idle session is closed for room (session_shutdown) and opens again from its file when named, its conversation whole",
    async () => {
      const ws = workspace();
      const limited = await startAcp(["--session-dir", ws.sessions, "-e", SESSIONS, "--provider", "sessions", "--model", "turns", "--greeting", "hello"], {
        cwd: ws.dir,
        env: { SESSIONS_LOG: ws.log, PARLEY_ACP_MAX_SESSIONS: "2" },
      });
      running.push(limited);
      const factories = (): number => logLines(ws).filter((l) => l === "factory").length;
      const before = factories();
      const a = await newSession(limited, ws);
      expect((await prompt(limited, a, "first words of a")).stopReason).toBe("end_turn");
      const b = await newSession(limited, ws);
      expect((await prompt(limited, b, "words of b")).stopReason).toBe("end_turn");
      expect(logLines(ws)).not.toContain(`shutdown ${a}`);
      // A third: a, used least recently and saved in full, is closed for room.
      const c = await newSession(limited, ws);
      await poll(() => logLines(ws).includes(`shutdown ${a}`), "session a closed for room");
      expect(logLines(ws)).not.toContain(`shutdown ${b}`);
      // Named again, a opens from its file (a fresh agent) and goes on where it was; b makes room.
      expect((await prompt(limited, a, "second words of a")).stopReason).toBe("end_turn");
      // Factories since start-up: b, c and a again (a first took up the agent the CLI started).
      expect(factories() - before).toBe(3);
      await poll(() => logLines(ws).includes(`shutdown ${b}`), "session b closed for room");
      const chain = entries(sessionFile(ws, a)).slice(1);
      chain.forEach((entry, i) => expect(entry.parentId ?? null).toBe(i === 0 ? null : chain[i - 1]?.id));
      const users = chain.filter((e) => e.message?.role === "user").map((e) => JSON.stringify(e.message?.content));
      expect(users).toHaveLength(2);
      expect(users[0]).toContain("first words of a");
      expect(users[1]).toContain("second words of a");
      // Updates kept coming under the ids the client knows.
      expect(limited.updates.every((n) => [a, b, c].includes(n.sessionId))).toBe(true);
      expect(limited.stderr()).toContain(`closed idle session ${a}`);
      // The client closing a session parley closed for room is told it is closed, not that it is unknown.
      expect(await limited.agent.request("session/close", { sessionId: b })).toEqual({});
      expect(await limited.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );
});

describe("parley --mode acp: session/resume", () => {
  it(
    "is advertised, and takes up a closed or an open session as session/load does, without replaying its conversation",
    async () => {
      const { ws, h, a, b } = await twoSessions();
      expect((await prompt(h, a, "first words")).stopReason).toBe("end_turn");
      expect((await prompt(h, b, "other words")).stopReason).toBe("end_turn");
      const initialized = h.lines
        .map((l) => JSON.parse(l) as { result?: { agentCapabilities?: { sessionCapabilities?: Record<string, unknown> } } })
        .find((m) => m.result?.agentCapabilities !== undefined);
      expect(initialized?.result?.agentCapabilities?.sessionCapabilities).toMatchObject({ resume: {} });
      await h.agent.request("session/close", { sessionId: a });
      const from = h.updates.length;
      // Closed: opened again from its file, with an agent of its own, and nothing replayed.
      const resumed = await h.agent.request("session/resume", { sessionId: a, cwd: ws.dir });
      expect(resumed.modes?.currentModeId).toBeDefined();
      // Open: the same agent, nothing replayed either.
      await h.agent.request("session/resume", { sessionId: b, cwd: ws.dir });
      expect((await prompt(h, a, "second words")).stopReason).toBe("end_turn");
      const since = h.updates.slice(from);
      expect(since.filter((n) => n.update.sessionUpdate === "user_message_chunk")).toEqual([]);
      expect(since.some((n) => n.sessionId === a && n.update.sessionUpdate === "agent_message_chunk")).toBe(true);
      const users = entries(sessionFile(ws, a))
        .filter((e) => e.message?.role === "user")
        .map((e) => JSON.stringify(e.message?.content));
      expect(users).toHaveLength(2);
      expect(users[1]).toContain("second words");
      expect(await h.close()).toEqual({ code: 0 });
    },
    TEST_MS,
  );
});

// Issue 34, item 6: one writer per session file, across processes too.
describe("a session another parley process has open", () => {
  it(
    "session/load is refused, saying which process holds it and what to do; once that process ends, it loads",
    async () => {
      const ws = workspace();
      const first = await start(ws);
      const id = await newSession(first, ws);
      await prompt(first, id, "hello");
      const second = await start(ws);
      const refused = await second.agent.request("session/load", { sessionId: id, cwd: ws.dir, mcpServers: [] }).then(
        () => undefined,
        (error: unknown) => error,
      );
      // An invalid request with the reason in its message, not an internal error.
      expect(refused).toMatchObject({ code: -32600, message: expect.stringMatching(/is open in another process \(pid \d+\)/) });
      await first.close();
      await second.agent.request("session/load", { sessionId: id, cwd: ws.dir, mcpServers: [] });
      expect(second.updates.some((n) => n.sessionId === id && n.update.sessionUpdate === "user_message_chunk")).toBe(true);
    },
    TEST_MS,
  );
});
