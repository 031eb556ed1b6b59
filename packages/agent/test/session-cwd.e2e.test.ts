/**
 * A session runs in the folder its header records, as in pi: started in one folder with
 * `--session` naming a session of another, parley works in the session's folder (bash, tools,
 * get_state, that folder's project settings), while paths on the command line (-e,
 * --model-script) still start from where it was started. A session whose recorded folder is gone
 * stops start-up with pi's words and exit status, and is refused by switch_session. Where pi 1.6.0
 * (`pi-newest`) can run the case (no model needed), both are driven alike and must answer alike.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startAcp } from "./helpers/acp-client.js";
import { OFFLINE_PROVIDER } from "./helpers/offline-agents.js";
import { PARLEY_BIN, spawnAgent, type AgentProcess } from "./helpers/spawn.js";
import { alike, closedAfterEach, MINUTE, NO_KEYS, ok, place, write, type Place } from "./helpers/pi-home.js";

const running = closedAfterEach();

function start(bin: string, p: Place, cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): AgentProcess {
  const agent = spawnAgent(bin, ["--mode", "rpc", ...args], { cwd, env: { ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir, ...env } });
  running.push(agent);
  return agent;
}

/** A stored session file recording `cwd` (pi's header, version 3), with no entries. */
function sessionFile(file: string, cwd: string, id: string): string {
  write(file, `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd })}\n`);
  return file;
}

/** Two folders: `launch`, where the agent is started, and `other`, whose session it opens. */
function folders(prefix: string): { p: Place; launch: string; other: string } {
  const p = place(prefix);
  const launch = p.cwd;
  const other = join(p.home, "work", "other");
  mkdirSync(other, { recursive: true });
  return { p, launch, other };
}

/** Answers project_trust with TRUST_VOTE; /trust-info notifies what it was asked (fixtures/pi-dropin/trust-voter.ts). */
const VOTER = join(import.meta.dirname, "fixtures/pi-dropin/trust-voter.ts");

/** Runs an extension command and returns the message it notified. */
async function notified(agent: AgentProcess, command: string): Promise<string> {
  const from = agent.records.length;
  agent.send({ type: "prompt", message: `/${command}`, id: command });
  const r = await agent.waitFor((x) => x.type === "extension_ui_request" && x["method"] === "notify", MINUTE, from);
  return String(r["message"]);
}

const output = (r: Record<string, unknown>): string => (r["data"] as { output: string }).output;

/** Sends a prompt and waits for its run to end. */
async function answered(agent: AgentProcess, message: string): Promise<void> {
  const from = agent.records.length;
  await ok(agent, { type: "prompt", message });
  await agent.waitFor((r) => r.type === "agent_end", MINUTE, from);
}

/** Waits for the process to end; its exit status and stderr. */
async function ended(agent: AgentProcess): Promise<{ code: number | null; stderr: string }> {
  const timer = setTimeout(() => agent.kill(), MINUTE);
  const { code } = await agent.exited;
  clearTimeout(timer);
  return { code, stderr: agent.stderr() };
}

describe("a session runs in the folder its header records", () => {
  it(
    "--session from another folder: bash runs there, -e starts from the launch folder; --continue stays (pi and parley alike)",
    async () => {
      const seen = await alike(async (bin) => {
        const { p, launch, other } = folders("parley-session-cwd-");
        const file = sessionFile(join(other, "s.jsonl"), other, "aaaaaaaa-1111-4111-8111-111111111111");
        // A relative -e path: found in the launch folder, not the session's.
        write(join(launch, "ext.ts"), 'export default function (pi) { pi.registerCommand("from-launch", { description: "d", handler: async () => {} }); }\n');
        const agent = start(bin, p, launch, ["--session", file, "-e", "./ext.ts"]);
        const pwd = output(await ok(agent, { type: "bash", command: "pwd" }));
        const state = (await ok(agent, { type: "get_state" }))["data"] as { sessionFile: string };
        const commands = ((await ok(agent, { type: "get_commands" }))["data"] as { commands: { name: string }[] }).commands.map((c) => c.name);
        agent.closeInput();
        await ended(agent);

        // --continue opens the launch folder's latest session in the launch folder, whatever it records.
        const slug = `--${launch.replace(/^\//, "").replace(/\//g, "-")}--`;
        sessionFile(
          join(p.agentDir, "sessions", slug, "2026-01-01T00-00-00-000Z_bbbbbbbb-1111-4111-8111-111111111111.jsonl"),
          other,
          "bbbbbbbb-1111-4111-8111-111111111111",
        );
        const continued = start(bin, p, launch, ["--continue"]);
        const continuedPwd = output(await ok(continued, { type: "bash", command: "pwd" }));
        const continuedId = ((await ok(continued, { type: "get_state" }))["data"] as { sessionId: string }).sessionId;

        return {
          pwd: pwd.trim() === other,
          sessionFile: state.sessionFile === file,
          extension: commands.includes("from-launch"),
          continuedPwd: continuedPwd.trim() === launch,
          continuedId,
        };
      });
      expect(seen).toEqual({ pwd: true, sessionFile: true, extension: true, continuedPwd: true, continuedId: "bbbbbbbb-1111-4111-8111-111111111111" });
    },
    5 * MINUTE,
  );

  it(
    "a recorded folder that does not exist: pi's message on stderr and exit 1 (pi and parley alike)",
    async () => {
      const results = await alike(async (bin) => {
        const { p, launch, other } = folders("parley-session-cwd-gone-");
        const gone = join(other, "gone");
        const file = sessionFile(join(other, "s.jsonl"), gone, "cccccccc-1111-4111-8111-111111111111");
        const agent = start(bin, p, launch, ["--session", file]);
        const result = await ended(agent);
        expect(agent.records).toEqual([]);
        // Nothing was written over or beside the session.
        expect(readFileSync(file, "utf8").split("\n").filter(Boolean)).toHaveLength(1);
        return { code: result.code, stderr: result.stderr.replaceAll(p.home, "<home>") };
      });
      expect(results).toEqual({
        code: 1,
        stderr:
          "Stored session working directory does not exist: <home>/work/other/gone\nSession file: <home>/work/other/s.jsonl\nCurrent working directory: <home>/work/project\n",
      });
    },
    3 * MINUTE,
  );

  it(
    "switch_session to a session whose recorded folder is gone: pi's error, the current session kept (pi and parley alike)",
    async () => {
      const answers = await alike(async (bin) => {
        const { p, launch, other } = folders("parley-session-cwd-switch-");
        const target = sessionFile(join(other, "t.jsonl"), join(other, "gone"), "dddddddd-1111-4111-8111-111111111111");
        const agent = start(bin, p, launch, []);
        const before = (await ok(agent, { type: "get_state" }))["data"] as { sessionFile: string };
        const r = await agent.request({ type: "switch_session", sessionPath: target }, MINUTE);
        const after = (await ok(agent, { type: "get_state" }))["data"] as { sessionFile: string };
        const pwd = output(await ok(agent, { type: "bash", command: "pwd" }));
        return {
          success: r["success"],
          error: String(r["error"]).replaceAll(p.home, "<home>"),
          kept: after.sessionFile === before.sessionFile,
          pwd: pwd.trim() === launch,
        };
      });
      expect(answers).toEqual({
        success: false,
        error:
          "Stored session working directory does not exist: <home>/work/other/gone\nSession file: <home>/work/other/t.jsonl\nCurrent working directory: <home>/work/project",
        kept: true,
        pwd: true,
      });
    },
    3 * MINUTE,
  );

  it(
    "switch_session to a session of another folder: the agent continues there, also in a new session afterwards (pi and parley alike)",
    async () => {
      const seen = await alike(async (bin) => {
        const { p, launch, other } = folders("parley-session-cwd-move-");
        const target = sessionFile(join(other, "t.jsonl"), other, "ffffffff-1111-4111-8111-111111111111");
        // An extension that says ctx.cwd at each session_start, through a command's notify.
        write(
          join(launch, "where.ts"),
          'let cwd = ""; export default function (pi) { pi.on("session_start", (_e, ctx) => { cwd = ctx.cwd; }); pi.registerCommand("where", { description: "d", handler: async (_a, ctx) => ctx.ui.notify(cwd + "|" + ctx.cwd, "info") }); }\n',
        );
        const agent = start(bin, p, launch, ["-e", "./where.ts"]);
        expect(output(await ok(agent, { type: "bash", command: "pwd" })).trim()).toBe(launch);
        await ok(agent, { type: "switch_session", sessionPath: target });
        const pwd = output(await ok(agent, { type: "bash", command: "pwd" })).trim();
        const from = agent.records.length;
        agent.send({ type: "prompt", message: "/where" });
        const note = await agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "notify", MINUTE, from);
        await ok(agent, { type: "new_session" });
        const newPwd = output(await ok(agent, { type: "bash", command: "pwd" })).trim();
        // A relative session path still starts from the launch folder, and that session's folder is the launch one.
        sessionFile(join(launch, "back.jsonl"), launch, "cdcdcdcd-1111-4111-8111-111111111111");
        await ok(agent, { type: "switch_session", sessionPath: "back.jsonl" });
        const backPwd = output(await ok(agent, { type: "bash", command: "pwd" })).trim();
        return {
          pwd: pwd === other,
          where: String(note["message"]) === `${other}|${other}`,
          newPwd: newPwd === other,
          backPwd: backPwd === launch,
        };
      });
      expect(seen).toEqual({ pwd: true, where: true, newPwd: true, backPwd: true });
    },
    3 * MINUTE,
  );

  it(
    "parley: the model's tools and the session folder's project settings follow the session; --model-script starts from the launch folder",
    async () => {
      const { p, launch, other } = folders("parley-session-cwd-tools-");
      const file = sessionFile(join(other, "s.jsonl"), other, "eeeeeeee-1111-4111-8111-111111111111");
      // Each folder's project settings mark the shell differently: the session's must apply.
      write(join(launch, ".pi", "settings.json"), { shellCommandPrefix: "export MARK=launch" });
      write(join(other, ".pi", "settings.json"), { shellCommandPrefix: "export MARK=session" });
      write(join(launch, "turns.json"), [{ toolCalls: [{ name: "write", arguments: { path: "made.txt", content: "written" } }] }, "done"]);
      const agent = start(PARLEY_BIN, p, launch, ["--approve", "--session", file, "--model-script", "turns.json"]);

      expect(output(await ok(agent, { type: "bash", command: 'echo "mark=$MARK"' })).trim()).toBe("mark=session");
      await answered(agent, "write it");
      expect(readFileSync(join(other, "made.txt"), "utf8")).toBe("written");
      expect(existsSync(join(launch, "made.txt"))).toBe(false);
      // The conversation was appended to the session's own file.
      expect(readFileSync(file, "utf8")).toContain("write it");
    },
    3 * MINUTE,
  );

  it(
    "parley: after a switch to another folder's session, the model's tools work there and a new session records that folder",
    async () => {
      const { p, launch, other } = folders("parley-session-cwd-move-tools-");
      const target = sessionFile(join(other, "t.jsonl"), other, "abababab-1111-4111-8111-111111111111");
      const turns = (name: string) => [{ toolCalls: [{ name: "write", arguments: { path: name, content: "written" } }] }, "done"];
      write(join(launch, "turns.json"), [...turns("first.txt"), ...turns("second.txt")]);
      const agent = start(PARLEY_BIN, p, launch, ["--model-script", "turns.json"]);

      await ok(agent, { type: "switch_session", sessionPath: target });
      await answered(agent, "write the first");
      expect(readFileSync(join(other, "first.txt"), "utf8")).toBe("written");
      await ok(agent, { type: "new_session" });
      await answered(agent, "write the second");
      expect(readFileSync(join(other, "second.txt"), "utf8")).toBe("written");
      expect(existsSync(join(launch, "first.txt")) || existsSync(join(launch, "second.txt"))).toBe(false);
      const created = ((await ok(agent, { type: "get_state" }))["data"] as { sessionFile: string }).sessionFile;
      expect(JSON.parse(readFileSync(created, "utf8").split("\n")[0]!)).toMatchObject({ type: "session", cwd: other });
    },
    3 * MINUTE,
  );

  it(
    "parley: after a switch, the project settings are the new folder's as its trust decides (--approve, else trust.json and defaultProjectTrust)",
    async () => {
      const { p, launch, other } = folders("parley-session-cwd-move-trust-");
      const target = sessionFile(join(other, "t.jsonl"), other, "efefefef-1111-4111-8111-111111111111");
      write(join(other, ".pi", "settings.json"), { shellCommandPrefix: "export MARK=session" });
      const marks: string[] = [];
      for (const args of [[], ["--approve"]]) {
        const agent = start(PARLEY_BIN, p, launch, args);
        await ok(agent, { type: "switch_session", sessionPath: target });
        marks.push(output(await ok(agent, { type: "bash", command: 'echo "mark=$MARK"' })).trim());
        // One writer per session file: the next run opens it once this one has ended.
        agent.closeInput();
        await agent.exited;
      }
      // Without --approve nothing trusts the folder (defaultProjectTrust "ask" has no one to ask in RPC mode).
      expect(marks).toEqual(["mark=", "mark=session"]);
    },
    3 * MINUTE,
  );

  it(
    "parley: a switch to another folder asks the new runtime's project_trust handlers, once per folder; a trusted folder's settings and extensions join",
    async () => {
      const { p, launch, other } = folders("parley-session-cwd-move-ask-");
      const target = sessionFile(join(other, "t.jsonl"), other, "cdcdcdcd-1111-4111-8111-111111111111");
      const back = sessionFile(join(launch, "back.jsonl"), launch, "dcdcdcdc-1111-4111-8111-111111111111");
      write(join(other, ".pi", "settings.json"), { shellCommandPrefix: "export MARK=session" });
      write(
        join(other, ".pi", "extensions", "here.ts"),
        'export default function (pi: any) { pi.registerCommand("from-other", { handler: async () => {} }); }\n',
      );
      const seen: Record<string, unknown>[] = [];
      for (const vote of ["yes", "no"]) {
        const log = join(p.home, `trust-${vote}.log`);
        const agent = start(PARLEY_BIN, p, launch, ["-e", VOTER], { TRUST_VOTE: vote, TRUST_LOG: log });
        const asks = (): number =>
          readFileSync(log, "utf8")
            .split("\n")
            .filter((l) => l === "voter:project_trust").length;
        await ok(agent, { type: "switch_session", sessionPath: target });
        const mark = output(await ok(agent, { type: "bash", command: 'echo "mark=$MARK"' })).trim();
        const names = ((await ok(agent, { type: "get_commands" }))["data"] as { commands: { name: string }[] }).commands.map((c) => c.name);
        const info = JSON.parse(await notified(agent, "trust-info")) as Record<string, unknown>;
        // Back to the launch folder (no project resources: trusted unasked) and there again: decided once.
        await ok(agent, { type: "switch_session", sessionPath: back });
        await ok(agent, { type: "switch_session", sessionPath: target });
        seen.push({ mark, fromOther: names.includes("from-other"), ...info, asks: asks() });
        // One writer per session file: the next run opens it once this one has ended.
        agent.closeInput();
        await agent.exited;
      }
      expect(seen).toEqual([
        { mark: "mark=session", fromOther: true, trusted: true, asked: { cwd: other, mode: "rpc", hasUI: false }, asks: 1 },
        { mark: "mark=", fromOther: false, trusted: false, asked: { cwd: other, mode: "rpc", hasUI: false }, asks: 1 },
      ]);
    },
    3 * MINUTE,
  );

  it(
    "ACP: session/load of another folder's session works there, first or as a switch; one whose folder is gone is refused",
    async () => {
      const { p, launch, other } = folders("parley-session-cwd-acp-");
      const sessions = join(p.home, "sessions");
      const stored = (id: string, cwd: string): string => sessionFile(join(sessions, `2026-01-01T00-00-00-000Z_${id}.jsonl`), cwd, id);
      const there = "12121212-1111-4111-8111-111111111111";
      const gone = "34343434-1111-4111-8111-111111111111";
      stored(there, other);
      stored(gone, join(other, "gone"));
      const turns = (name: string) => [{ toolCalls: [{ name: "write", arguments: { path: name, content: "written" } }] }, "done"];
      write(join(launch, "turns.json"), [...turns("first.txt"), ...turns("second.txt")]);
      const h = await startAcp(["--model-script", "turns.json", "--session-dir", sessions], { cwd: launch, home: p.home });
      try {
        const prompt = (sessionId: string, text: string) => h.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
        // The first session the client chooses.
        await h.agent.request("session/load", { sessionId: there, cwd: other, mcpServers: [] });
        expect((await prompt(there, "write the first")).stopReason).toBe("end_turn");
        expect(readFileSync(join(other, "first.txt"), "utf8")).toBe("written");
        // Back to a new session (it stays in that folder), then the stored one again: a switch.
        const made = await h.agent.request("session/new", { cwd: other, mcpServers: [] });
        await expect(h.agent.request("session/load", { sessionId: gone, cwd: other, mcpServers: [] })).rejects.toThrow(
          /Stored session working directory does not exist/,
        );
        await h.agent.request("session/load", { sessionId: there, cwd: other, mcpServers: [] });
        expect((await prompt(there, "write the second")).stopReason).toBe("end_turn");
        expect(readFileSync(join(other, "second.txt"), "utf8")).toBe("written");
        expect(existsSync(join(launch, "first.txt")) || existsSync(join(launch, "second.txt"))).toBe(false);
        expect(made.sessionId).not.toBe(there);
        expect(await h.close()).toEqual({ code: 0 });
      } finally {
        if (h.child.exitCode === null) h.child.kill("SIGKILL");
      }
    },
    3 * MINUTE,
  );
});

describe("where new sessions go: beside the current one, as in pi", () => {
  it(
    "after --session FILE and switch_session FILE, new_session is written in that file's folder; a chosen --session-dir holds for the start-up file",
    async () => {
      const seen = await alike(async (bin) => {
        const p = place("parley-session-dir-");
        const mine = join(p.home, "app-sessions");
        const theirs = join(p.home, "elsewhere");
        const chosen = join(p.home, "chosen");
        const first = sessionFile(join(mine, "first.jsonl"), p.cwd, "cccccccc-1111-4111-8111-111111111111");
        const second = sessionFile(join(theirs, "second.jsonl"), p.cwd, "dddddddd-1111-4111-8111-111111111111");
        const dirOf = async (agent: AgentProcess): Promise<string> => {
          const file = ((await ok(agent, { type: "get_state" }))["data"] as { sessionFile: string }).sessionFile;
          return file.slice(0, file.lastIndexOf("/")).replace(p.home, "<home>");
        };
        const agent = start(bin, p, p.cwd, ["--session", first]);
        await ok(agent, { type: "new_session" });
        const afterStart = await dirOf(agent);
        await ok(agent, { type: "switch_session", sessionPath: second });
        await ok(agent, { type: "new_session" });
        const afterSwitch = await dirOf(agent);
        agent.closeInput();
        await ended(agent);

        const withDir = start(bin, p, p.cwd, ["--session", first, "--session-dir", chosen, "-e", OFFLINE_PROVIDER, "--provider", "offline", "--model", "echo"]);
        // A clone of the start-up session goes to the chosen directory too (a reply to clone at first:
        // pi writes a session's file with its first reply).
        await answered(withDir, "Reply with just: cloned");
        await ok(withDir, { type: "clone" });
        const chosenClone = await dirOf(withDir);
        await ok(withDir, { type: "switch_session", sessionPath: first });
        await ok(withDir, { type: "new_session" });
        const chosenAfterStart = await dirOf(withDir);
        await ok(withDir, { type: "switch_session", sessionPath: second });
        await ok(withDir, { type: "new_session" });
        const chosenAfterSwitch = await dirOf(withDir);
        withDir.closeInput();
        await ended(withDir);
        return { afterStart, afterSwitch, chosenClone, chosenAfterStart, chosenAfterSwitch };
      });
      expect(seen).toEqual({
        afterStart: "<home>/app-sessions",
        afterSwitch: "<home>/elsewhere",
        chosenClone: "<home>/chosen",
        // Switched back to the start-up file: opened in its own folder now.
        chosenAfterStart: "<home>/app-sessions",
        // pi opens a switched-to file in its own folder, whatever directory was chosen.
        chosenAfterSwitch: "<home>/elsewhere",
      });
    },
    3 * MINUTE,
  );
});
