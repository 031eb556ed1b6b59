/**
 * The last gaps between pi's files and parley, through the spawned CLI with HOME and
 * PI_CODING_AGENT_DIR in temporary folders: settings' shellCommandPrefix and shellPath (bash tool
 * and `bash` command), the model scope of --models / enabledModels (cycle_model, ctx.scopedModels),
 * settings' skills and prompts arrays, --list-models with extension providers, a session whose
 * model came from an extension provider, models.json entries that adjust built-in providers, and
 * auth.json OAuth logins (requests go to a local server standing in for the provider), and project
 * trust as the newest pi decides it in RPC mode.
 */
import { execFile } from "node:child_process";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { chmodSync, mkdirSync, readdirSync, readFileSync, realpathSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { PARLEY_BIN, spawnAgent, type AgentProcess, type Rec } from "./helpers/spawn.js";
import { closedAfterEach, MINUTE, NO_KEYS, ok, place, write, type Place } from "./helpers/pi-home.js";

const TRIO = resolve(import.meta.dirname, "fixtures/pi-dropin/three-models.ts");
const VOTER = resolve(import.meta.dirname, "fixtures/pi-dropin/trust-voter.ts");

/** pi's own lock library (proper-lockfile, which pi's trust.json store uses), from pi's dependencies. */
const properLockfile = createRequire(import.meta.url)("proper-lockfile") as {
  lockSync(file: string, options: { realpath: boolean; lockfilePath: string }): () => void;
};

/** An extension that appends `<name>:factory` and `<name>:session_start` to $TRUST_LOG. */
const logger = (name: string): string => `import { appendFileSync } from "node:fs";
export default function (pi) {
  const note = (what) => appendFileSync(process.env.TRUST_LOG, "${name}:" + what + "\\n");
  note("factory");
  pi.on("session_start", () => note("session_start"));
}
`;

const env = (p: Place, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir, ...extra });

const running = closedAfterEach();

function start(p: Place, args: string[], extra: NodeJS.ProcessEnv = {}): AgentProcess {
  const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", ...args], { cwd: p.cwd, env: env(p, extra) });
  running.push(agent);
  return agent;
}

const modelOf = (data: unknown): string => {
  const m = (data as { model: { provider: string; id: string } }).model;
  return `${m.provider}/${m.id}`;
};

async function notified(agent: AgentProcess, command: string): Promise<string> {
  const from = agent.records.length;
  agent.send({ type: "prompt", message: `/${command}`, id: command });
  const r = await agent.waitFor((x) => x.type === "extension_ui_request" && x["method"] === "notify", MINUTE, from);
  return String(r["message"]);
}

describe("pi's settings and models, the remaining gaps", () => {
  it(
    "shellCommandPrefix and shellPath reach the bash tool and the bash command, as in pi",
    async () => {
      const p = place("parley-gaps-");
      const shell = join(p.home, "my-shell");
      // A shell that marks its environment, then is bash: proves shellPath chose it.
      write(shell, '#!/bin/sh\nexport VIA_SETTINGS_SHELL=yes\nexec /bin/bash "$@"\n');
      chmodSync(shell, 0o755);
      write(join(p.agentDir, "settings.json"), { shellPath: shell, shellCommandPrefix: "export PREFIX_MARK=from-prefix" });
      const command = 'echo "mark=$PREFIX_MARK shell=$VIA_SETTINGS_SHELL"';
      const script = join(p.home, "turns.json");
      write(script, [{ toolCalls: [{ name: "bash", arguments: { command } }] }, "done"]);
      const agent = start(p, ["--no-session", "--model-script", script]);

      const bash = await ok(agent, { type: "bash", command });
      expect((bash["data"] as { output: string }).output).toContain("mark=from-prefix shell=yes");

      const from = agent.records.length;
      await ok(agent, { type: "prompt", message: "run it" });
      const end = await agent.waitFor((r) => r.type === "tool_execution_end", MINUTE, from);
      const text = JSON.stringify(end["result"]);
      expect(text).toContain("mark=from-prefix shell=yes");
      expect(end["isError"]).toBe(false);
    },
    2 * MINUTE,
  );

  it(
    "--models limits cycle_model to the scope (with each pattern's thinking level), ctx.scopedModels reflects it",
    async () => {
      const p = place("parley-gaps-");
      const agent = start(p, ["--no-session", "-e", TRIO, "--models", "trio/alpha,trio/beta:high"]);
      expect(modelOf((await ok(agent, { type: "get_state" }))["data"])).toBe("trio/alpha");
      expect(await notified(agent, "show-scope")).toBe("trio/alpha\ntrio/beta:high");

      const first = (await ok(agent, { type: "cycle_model" }))["data"] as { model: { id: string }; thinkingLevel: string; isScoped: boolean };
      expect([first.model.id, first.thinkingLevel, first.isScoped]).toEqual(["beta", "high", true]);
      const second = (await ok(agent, { type: "cycle_model" }))["data"] as { model: { id: string }; isScoped: boolean };
      expect([second.model.id, second.isScoped]).toEqual(["alpha", true]);
    },
    2 * MINUTE,
  );

  it(
    "settings.json enabledModels (a glob) is the scope; the settings' default model wins when it is in it",
    async () => {
      const p = place("parley-gaps-");
      write(join(p.agentDir, "settings.json"), { enabledModels: ["trio/*a"], defaultProvider: "trio", defaultModel: "gamma" });
      const agent = start(p, ["--no-session", "-e", TRIO]);
      expect(modelOf((await ok(agent, { type: "get_state" }))["data"])).toBe("trio/gamma");
      expect(await notified(agent, "show-scope")).toBe("trio/alpha\ntrio/beta\ntrio/gamma");
      const cycled = (await ok(agent, { type: "cycle_model" }))["data"] as { model: { id: string }; isScoped: boolean };
      expect([cycled.model.id, cycled.isScoped]).toEqual(["alpha", true]);

      // One model in scope: nothing to cycle to (pi answers null); unscoped, ctx.scopedModels is empty.
      const single = start(p, ["--no-session", "-e", TRIO, "--models", "trio/beta"]);
      expect((await ok(single, { type: "cycle_model" }))["data"]).toBeNull();
      const unscoped = start(p, ["--no-session", "-e", TRIO, "--models", ""]);
      expect(await notified(unscoped, "show-scope")).toBe("(none)");
    },
    3 * MINUTE,
  );

  it(
    "settings.json skills and prompts arrays: global paths from the agent directory, project paths from .pi/",
    async () => {
      const p = place("parley-gaps-");
      write(join(p.agentDir, "my-skills/listed/SKILL.md"), "---\ndescription: Listed in the global settings\n---\nListed.\n");
      write(join(p.home, "shared-prompts/shared.md"), "---\ndescription: Shared prompt\n---\nShared $1\n");
      write(join(p.agentDir, "settings.json"), { skills: ["my-skills"], prompts: ["~/shared-prompts"] });
      write(join(p.cwd, ".pi/more-prompts/local.md"), "---\ndescription: Project-listed prompt\n---\nLocal\n");
      write(join(p.cwd, ".pi/settings.json"), { prompts: ["more-prompts"] });
      const agent = start(p, ["--no-session", "--approve"]);
      const commands = ((await ok(agent, { type: "get_commands" }))["data"] as { commands: Rec[] }).commands;
      const byName = new Map(commands.map((c) => [String(c["name"]), c]));
      expect(byName.get("skill:listed")?.["sourceInfo"]).toMatchObject({ source: "local", scope: "user" });
      expect(byName.get("shared")?.["sourceInfo"]).toMatchObject({ source: "local", scope: "user" });
      expect(byName.get("local")?.["sourceInfo"]).toMatchObject({ source: "local", scope: "project" });
      // --no-skills turns them off with discovery, as in pi.
      const none = start(p, ["--no-session", "--approve", "--no-skills"]);
      const names = ((await ok(none, { type: "get_commands" }))["data"] as { commands: Rec[] }).commands.map((c) => c["name"]);
      expect(names).not.toContain("skill:listed");
      expect(names).toContain("shared");
    },
    2 * MINUTE,
  );

  it(
    "--list-models loads the extensions, so their providers' models are listed",
    async () => {
      const p = place("parley-gaps-");
      const { stdout } = await promisify(execFile)(PARLEY_BIN, ["--list-models", "-e", TRIO], {
        cwd: p.cwd,
        env: { ...process.env, ...env(p) },
        timeout: 2 * MINUTE,
      });
      const rows = stdout.split("\n").filter((l) => l.startsWith("trio "));
      expect(rows.map((r) => r.split(/\s+/)[1])).toEqual(["alpha", "beta", "gamma"]);
      const { stdout: searched } = await promisify(execFile)(PARLEY_BIN, ["--list-models", "gam", "-e", TRIO], {
        cwd: p.cwd,
        env: { ...process.env, ...env(p) },
        timeout: 2 * MINUTE,
      });
      expect(searched).toMatch(/trio\s+gamma/);
      expect(searched).not.toMatch(/trio\s+alpha/);
    },
    2 * MINUTE,
  );

  it(
    "a session whose model came from an extension provider continues with it (-c, --session, switch_session)",
    async () => {
      const p = place("parley-gaps-");
      const first = start(p, ["-e", TRIO]);
      // The default is the provider's first model; the session records another.
      expect(modelOf((await ok(first, { type: "get_state" }))["data"])).toBe("trio/alpha");
      await ok(first, { type: "set_model", provider: "trio", modelId: "gamma" });
      const from = first.records.length;
      await ok(first, { type: "prompt", message: "hello" });
      await first.waitFor((r) => r.type === "agent_settled", MINUTE, from);
      const sessionFile = String(((await ok(first, { type: "get_state" }))["data"] as { sessionFile: string }).sessionFile);
      first.closeInput();
      await first.exited;
      expect(readdirSync(dirname(sessionFile))).toHaveLength(1);

      // One writer per session file: each run ends before the next opens it.
      for (const args of [["-c"], ["--session", sessionFile]]) {
        const resumed = start(p, ["-e", TRIO, ...args]);
        expect(modelOf((await ok(resumed, { type: "get_state" }))["data"])).toBe("trio/gamma");
        resumed.closeInput();
        await resumed.exited;
      }
      const other = start(p, ["-e", TRIO, "--no-session"]);
      expect(modelOf((await ok(other, { type: "get_state" }))["data"])).toBe("trio/alpha");
      const switcher = start(p, ["-e", TRIO]);
      expect(modelOf((await ok(switcher, { type: "get_state" }))["data"])).toBe("trio/alpha");
      await ok(switcher, { type: "switch_session", sessionPath: sessionFile });
      expect(modelOf((await ok(switcher, { type: "get_state" }))["data"])).toBe("trio/gamma");
    },
    3 * MINUTE,
  );

  it(
    "models.json adjusts a built-in provider (baseUrl, apiKey, headers, modelOverrides); an auth.json OAuth login is its key",
    async () => {
      const seen: IncomingHttpHeaders[] = [];
      const server = createServer((req, res) => {
        seen.push(req.headers);
        req.resume();
        req.on("end", () => {
          res.writeHead(400, { "content-type": "application/json" });
          res.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "stand-in provider" } }));
        });
      });
      await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        const p = place("parley-gaps-");
        write(join(p.agentDir, "models.json"), {
          providers: {
            anthropic: {
              baseUrl,
              apiKey: "sk-from-models-json",
              headers: { "x-proxy": "from-models-json" },
              modelOverrides: { "claude-sonnet-4-5": { name: "Sonnet via proxy", contextWindow: 12_345 } },
            },
          },
        });
        // The provider's key in models.json counts as credentials: the default model is anthropic's.
        const agent = start(p, ["--no-session"]);
        const initial = (await ok(agent, { type: "get_state" }))["data"] as { model: { provider: string; baseUrl: string } };
        expect([initial.model.provider, initial.model.baseUrl]).toEqual(["anthropic", baseUrl]);
        const set = (await ok(agent, { type: "set_model", provider: "anthropic", modelId: "claude-sonnet-4-5" }))["data"] as Record<string, unknown>;
        expect([set["name"], set["contextWindow"], set["baseUrl"]]).toEqual(["Sonnet via proxy", 12_345, baseUrl]);
        const from = agent.records.length;
        await ok(agent, { type: "prompt", message: "hello" });
        await agent.waitFor((r) => r.type === "agent_settled", MINUTE, from);
        const first = seen.at(-1);
        expect(first?.["x-api-key"] ?? first?.["authorization"]).toContain("sk-from-models-json");
        expect(first?.["x-proxy"]).toBe("from-models-json");

        // An OAuth login in auth.json comes before models.json's key: its access token is sent.
        write(join(p.agentDir, "auth.json"), { anthropic: { type: "oauth", access: "sk-ant-oat01-stand-in", refresh: "r", expires: Date.now() + 3_600_000 } });
        const oauth = start(p, ["--no-session", "--model", "anthropic/claude-sonnet-4-5"]);
        const count = seen.length;
        const mark = oauth.records.length;
        await ok(oauth, { type: "prompt", message: "hello" });
        await oauth.waitFor((r) => r.type === "agent_settled", MINUTE, mark);
        expect(seen.length).toBeGreaterThan(count);
        expect(`${seen.at(-1)?.["authorization"] ?? ""} ${seen.at(-1)?.["x-api-key"] ?? ""}`).toContain("sk-ant-oat01-stand-in");

        // An expired login is no warning: it is refreshed before its first request (auth-refresh.e2e.test.ts).
        write(join(p.agentDir, "auth.json"), { openai: { type: "oauth", access: "old", refresh: "r", expires: Date.now() - 1000 } });
        const expired = start(p, ["--no-session"]);
        await ok(expired, { type: "get_state" });
        expect(expired.stderr()).not.toMatch(/expired/);
      } finally {
        server.close();
      }
    },
    3 * MINUTE,
  );

  it(
    "project trust: a project with .pi/ resources is used only when trusted (project_trust handlers, trust.json, defaultProjectTrust, --approve)",
    async () => {
      const p = place("parley-gaps-");
      write(join(p.cwd, ".pi/settings.json"), { followUpMode: "all" });
      write(join(p.cwd, ".pi/prompts/from-project.md"), "---\ndescription: Project prompt\n---\nHi\n");
      const look = async (args: string[], extra: NodeJS.ProcessEnv = {}) => {
        const agent = start(p, ["--no-session", "-e", VOTER, ...args], extra);
        const s = (await ok(agent, { type: "get_state" }))["data"] as { followUpMode: string };
        const names = ((await ok(agent, { type: "get_commands" }))["data"] as { commands: Rec[] }).commands.map((c) => c["name"]);
        const info = JSON.parse(await notified(agent, "trust-info")) as { asked: { cwd: string; mode: string; hasUI: boolean } | null; trusted: boolean };
        return { followUpMode: s.followUpMode, prompt: names.includes("from-project"), ...info };
      };

      // Nothing decides and RPC mode cannot ask: not trusted, so nothing of .pi/ is used.
      expect(await look([])).toMatchObject({ followUpMode: "one-at-a-time", prompt: false, trusted: false, asked: null });
      // An extension's project_trust handler decides, asked as pi asks it in RPC mode.
      const yes = await look([], { TRUST_VOTE: "yes" });
      expect(yes).toMatchObject({ followUpMode: "all", prompt: true, trusted: true });
      expect(yes.asked).toEqual({ cwd: p.cwd, mode: "rpc", hasUI: false });
      expect(await look([], { TRUST_VOTE: "no" })).toMatchObject({ prompt: false, trusted: false });
      // "undecided" falls through to pi's trust.json (the folder or an ancestor)...
      write(join(p.agentDir, "trust.json"), { [dirname(p.cwd)]: true });
      expect(await look([], { TRUST_VOTE: "undecided" })).toMatchObject({ followUpMode: "all", prompt: true, trusted: true });
      write(join(p.agentDir, "trust.json"), { [p.cwd]: false, [dirname(p.cwd)]: true });
      expect(await look([])).toMatchObject({ prompt: false, trusted: false });
      // ...then to the global defaultProjectTrust.
      write(join(p.agentDir, "trust.json"), {});
      write(join(p.agentDir, "settings.json"), { defaultProjectTrust: "always" });
      expect(await look([])).toMatchObject({ prompt: true, trusted: true });
      // --no-approve / --approve decide without asking.
      expect(await look(["--no-approve"], { TRUST_VOTE: "yes" })).toMatchObject({ prompt: false, trusted: false, asked: null });
      write(join(p.agentDir, "settings.json"), {});
      expect(await look(["--approve"], { TRUST_VOTE: "no" })).toMatchObject({ prompt: true, trusted: true, asked: null });

      // A project without such resources is trusted and no one is asked.
      const plain = place("parley-gaps-");
      const agent = start(plain, ["--no-session", "-e", VOTER], { TRUST_VOTE: "no" });
      expect(JSON.parse(await notified(agent, "trust-info"))).toEqual({ asked: null, trusted: true });
    },
    4 * MINUTE,
  );

  it(
    "project trust: each factory runs once, project_trust between the user's and the project's; remember: true saves to pi's trust.json (other entries kept) and the next start honours it",
    async () => {
      const p = place("parley-trust-");
      const log = join(p.home, "events.log");
      const trustFile = join(p.agentDir, "trust.json");
      // The project's settings, including the shell ones the bash tool was made with.
      write(join(p.cwd, ".pi/settings.json"), { followUpMode: "all", shellCommandPrefix: "export FROM_PROJECT=yes" });
      write(join(p.cwd, ".pi/extensions/project-ext.ts"), logger("project"));
      const command = 'echo "mark=$FROM_PROJECT"';
      const script = join(p.home, "turns.json");
      write(script, [{ toolCalls: [{ name: "bash", arguments: { command } }] }, "done"]);
      write(join(p.agentDir, "extensions/user-ext.ts"), logger("user"));
      // Other folders' entries as pi (or the user) left them, null included: kept as they are.
      write(trustFile, '{"/elsewhere/b":false,\n   "/elsewhere/a": true, "/elsewhere/c": null}');
      const others = { "/elsewhere/a": true, "/elsewhere/b": false, "/elsewhere/c": null };
      const key = realpathSync(p.cwd);
      const run = async (extra: NodeJS.ProcessEnv, args: string[] = []) => {
        writeFileSync(log, "");
        const agent = start(p, ["--no-session", "-e", VOTER, "--model-script", script, ...args], { TRUST_LOG: log, ...extra });
        const s = (await ok(agent, { type: "get_state" }))["data"] as { followUpMode: string };
        const info = JSON.parse(await notified(agent, "trust-info")) as { trusted: boolean };
        // The `bash` command and the bash tool, both with the shell settings in force.
        const bash = ((await ok(agent, { type: "bash", command }))["data"] as { output: string }).output.trim();
        const from = agent.records.length;
        await ok(agent, { type: "prompt", message: "run it" });
        const end = await agent.waitFor((r) => r.type === "tool_execution_end", MINUTE, from);
        const tool = /mark=\w*/.exec(JSON.stringify(end["result"]))?.[0];
        agent.closeInput();
        await agent.exited;
        return { followUpMode: s.followUpMode, trusted: info.trusted, bash, tool, events: readFileSync(log, "utf8").trim().split("\n") };
      };

      // The -e and user's factories run (pi's order: -e first), their handlers are asked, then the
      // project's factory runs: each once; session_start follows, in pi's load order (-e, project, user).
      const first = await run({ TRUST_VOTE: "yes", TRUST_REMEMBER: "1" });
      expect(first.events).toEqual([
        "voter:factory",
        "user:factory",
        "voter:project_trust",
        "project:factory",
        "voter:session_start",
        "project:session_start",
        "user:session_start",
      ]);
      // The project's settings apply although the agent was made before the decision.
      expect(first).toMatchObject({ followUpMode: "all", trusted: true, bash: "mark=yes", tool: "mark=yes" });
      // pi's format: the folder's real path as key, keys sorted, two-space JSON, final newline.
      const saved = { ...others, [key]: true };
      const sorted = Object.fromEntries(Object.entries(saved).sort(([a], [b]) => (a < b ? -1 : 1)));
      expect(readFileSync(trustFile, "utf8")).toBe(`${JSON.stringify(sorted, null, 2)}\n`);

      // Next start, no handler: trust.json decides, and every factory still runs once.
      const second = await run({});
      expect(second.events).toEqual(["voter:factory", "user:factory", "project:factory", "voter:session_start", "project:session_start", "user:session_start"]);
      expect(second).toMatchObject({ followUpMode: "all", trusted: true });

      // "no" remembered replaces the entry; then the project stays out without anyone asked.
      const third = await run({ TRUST_VOTE: "no", TRUST_REMEMBER: "1" });
      expect(third.events).toEqual(["voter:factory", "user:factory", "voter:project_trust", "voter:session_start", "user:session_start"]);
      expect(JSON.parse(readFileSync(trustFile, "utf8"))).toEqual({ ...others, [key]: false });
      const fourth = await run({});
      expect(fourth).toMatchObject({ followUpMode: "one-at-a-time", trusted: false, bash: "mark=", tool: "mark=" });
      expect(fourth.events).toEqual(["voter:factory", "user:factory", "voter:session_start", "user:session_start"]);

      // --approve decides at once: everything loads in one pass, each factory once.
      const fifth = await run({ TRUST_VOTE: "no" }, ["--approve"]);
      expect(fifth).toMatchObject({ followUpMode: "all", trusted: true });
      expect(fifth.events).toEqual(["voter:factory", "project:factory", "user:factory", "voter:session_start", "project:session_start", "user:session_start"]);
      // Nothing but pi's files is left in the agent directory (no temporary file, no lock).
      expect(readdirSync(p.agentDir).sort()).toEqual(["extensions", "trust.json"]);
    },
    6 * MINUTE,
  );

  it(
    "project trust: remember: true never writes over a trust.json it cannot read or while pi holds its lock (said on stderr), takes over a stale lock, and creates the file and its folder when absent",
    async () => {
      const p = place("parley-trust-");
      const trustFile = join(p.agentDir, "trust.json");
      write(join(p.cwd, ".pi/settings.json"), { followUpMode: "all" });
      const key = realpathSync(p.cwd);
      const remembered = async (extra: NodeJS.ProcessEnv = {}) => {
        const agent = start(p, ["--no-session", "-e", VOTER], { TRUST_VOTE: "yes", TRUST_REMEMBER: "1", ...extra });
        const info = JSON.parse(await notified(agent, "trust-info")) as { trusted: boolean };
        agent.closeInput();
        await agent.exited;
        return { trusted: info.trusted, stderr: agent.stderr() };
      };

      // Not JSON, or a value pi would refuse: the decision holds for this run, the file is left
      // byte for byte, and stderr says why nothing was saved.
      for (const unreadable of ['{ "/x": true, oops', '{"/x": "yes"}']) {
        write(trustFile, unreadable);
        const run = await remembered();
        expect(run.trusted).toBe(true);
        expect(run.stderr).toMatch(/trust\.json.*was not saved, and the file was left as it is/);
        expect(readFileSync(trustFile, "utf8")).toBe(unreadable);
      }

      // While pi holds its lock (proper-lockfile, as pi takes it), parley waits, then gives up
      // without writing and says so.
      write(trustFile, { "/x": true });
      const release = properLockfile.lockSync(p.agentDir, { realpath: false, lockfilePath: `${trustFile}.lock` });
      try {
        const run = await remembered();
        expect(run.trusted).toBe(true);
        expect(run.stderr).toMatch(/trust\.json.*not saved/);
        expect(JSON.parse(readFileSync(trustFile, "utf8"))).toEqual({ "/x": true });
      } finally {
        release();
      }
      // A lock left by a process that died (untouched for longer than proper-lockfile's 10 s) is taken over.
      mkdirSync(`${trustFile}.lock`);
      const old = new Date(Date.now() - 60_000);
      utimesSync(`${trustFile}.lock`, old, old);
      expect((await remembered()).trusted).toBe(true);
      expect(JSON.parse(readFileSync(trustFile, "utf8"))).toEqual({ "/x": true, [key]: true });
      expect(readdirSync(p.agentDir).sort()).toEqual(["trust.json"]);

      // An agent directory that does not exist yet: the folder and the file are made.
      const fresh = join(p.home, "new-place", "agent");
      expect((await remembered({ PI_CODING_AGENT_DIR: fresh })).trusted).toBe(true);
      expect(JSON.parse(readFileSync(join(fresh, "trust.json"), "utf8"))).toEqual({ [key]: true });
    },
    6 * MINUTE,
  );
});
