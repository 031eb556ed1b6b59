/**
 * pi's files, read by the spawned CLI with HOME and PI_CODING_AGENT_DIR in temporary folders:
 * settings.json (global and project), auth.json, models.json, the sessions directory and its
 * naming, PI_CODING_AGENT_SESSION_DIR, context files, SYSTEM.md / APPEND_SYSTEM.md, the tool
 * flags, session ids, and the sessions earlier parley versions wrote under ~/.parley.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, utimesSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cwdSlug } from "../src/session/store.js";
import { PARLEY_BIN, spawnAgent, type AgentProcess, type Rec } from "./helpers/spawn.js";
import { MINUTE, NO_KEYS, place, write, type Place } from "./helpers/pi-home.js";
import { AGENT_CEILING_MS, deadline } from "./helpers/deadline.js";

const SHOW = resolve(import.meta.dirname, "fixtures/pi-dropin/show-setup.ts");
const PROVIDER = resolve(import.meta.dirname, "fixtures/pi-dropin/offline-provider.ts");

const running: AgentProcess[] = [];
afterEach(async () => {
  for (const agent of running.splice(0)) {
    agent.closeInput();
    const timer = setTimeout(() => agent.kill(), deadline(AGENT_CEILING_MS));
    await agent.exited;
    clearTimeout(timer);
  }
});

function start(p: Place, args: string[], env: NodeJS.ProcessEnv = {}): AgentProcess {
  const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", ...args], { cwd: p.cwd, env: { ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir, ...env } });
  running.push(agent);
  return agent;
}

async function state(agent: AgentProcess): Promise<Record<string, unknown>> {
  const r = await agent.request({ type: "get_state" }, MINUTE);
  expect(r["success"], agent.stderr()).toBe(true);
  return r["data"] as Record<string, unknown>;
}

async function notified(agent: AgentProcess, command: string): Promise<string> {
  const from = agent.records.length;
  agent.send({ type: "prompt", message: `/${command}`, id: command });
  const r: Rec = await agent.waitFor((x) => x.type === "extension_ui_request" && x["method"] === "notify", MINUTE, from);
  return String(r["message"]);
}

const modelOf = (s: Record<string, unknown>): string => {
  const m = s["model"] as { provider: string; id: string };
  return `${m.provider}/${m.id}`;
};

describe("pi's files", () => {
  it(
    "settings.json: global keys, overridden by the project's .pi/settings.json",
    async () => {
      const p = place("parley-pi-files-");
      write(join(p.agentDir, "settings.json"), {
        steeringMode: "all",
        followUpMode: "all",
        compaction: { enabled: false },
        defaultProvider: "anthropic",
        defaultModel: "claude-sonnet-4-5",
      });
      write(join(p.cwd, ".pi", "settings.json"), { followUpMode: "one-at-a-time" });
      // The project's .pi/ counts once the project is trusted (pi's trust.json; see the trust test in pi-dropin-gaps).
      write(join(p.agentDir, "trust.json"), { [p.cwd]: true });
      const s = await state(start(p, ["--no-session"]));
      expect(s["steeringMode"]).toBe("all");
      expect(s["followUpMode"]).toBe("one-at-a-time");
      expect(s["autoCompactionEnabled"]).toBe(false);
      expect(modelOf(s)).toBe("anthropic/claude-sonnet-4-5");
      // --no-approve: the project's file is ignored.
      expect((await state(start(p, ["--no-session", "--no-approve"])))["followUpMode"]).toBe("all");
    },
    3 * MINUTE,
  );

  it(
    "auth.json keys choose the default model and authorise its provider",
    async () => {
      const p = place("parley-pi-files-");
      write(join(p.agentDir, "auth.json"), { openai: { type: "api_key", key: "sk-test-from-auth-json" } });
      const agent = start(p, ["--no-session"]);
      const s = await state(agent);
      expect((s["model"] as { provider: string }).provider).toBe("openai");
      expect(s["offlineModel"]).toBeUndefined();
      const models = await agent.request({ type: "get_available_models" }, MINUTE);
      const list = (models["data"] as { models: { provider: string; id: string }[] }).models;
      expect(list.some((m) => m.provider === "openai" && m.id === "gpt-5")).toBe(true);
      // `--model gpt-5` is gpt-5 itself, never a longer id such as gpt-5.5-pro.
      expect(modelOf(await state(start(p, ["--no-session", "--model", "gpt-5"])))).toBe("openai/gpt-5");
    },
    3 * MINUTE,
  );

  it(
    "models.json: a custom provider's model is chosen with --model provider/id",
    async () => {
      const p = place("parley-pi-files-");
      write(join(p.agentDir, "models.json"), {
        providers: {
          local: {
            baseUrl: "http://127.0.0.1:9/v1",
            api: "openai-completions",
            apiKey: "none",
            models: [{ id: "tiny-1", contextWindow: 4096, maxTokens: 512 }],
          },
        },
      });
      const s = await state(start(p, ["--no-session", "--model", "local/tiny-1"]));
      expect(modelOf(s)).toBe("local/tiny-1");
      expect((s["model"] as { contextWindow: number }).contextWindow).toBe(4096);
    },
    2 * MINUTE,
  );

  it(
    "an extension provider's model: chosen with --provider/--model, and the default when nothing else has a key",
    async () => {
      const p = place("parley-pi-files-");
      expect(modelOf(await state(start(p, ["--no-session", "-e", PROVIDER, "--provider", "fixture", "--model", "echo-1"])))).toBe("fixture/echo-1");
      expect(modelOf(await state(start(p, ["--no-session", "-e", PROVIDER, "--model", "fixture/echo-1"])))).toBe("fixture/echo-1");
      const byDefault = start(p, ["--no-session", "-e", PROVIDER]);
      expect(modelOf(await state(byDefault))).toBe("fixture/echo-1");
      expect(byDefault.stderr()).not.toContain("offline demo model");
    },
    3 * MINUTE,
  );

  it(
    "sessions go where pi puts them, named like pi's; PI_CODING_AGENT_SESSION_DIR and --session-dir move them",
    async () => {
      const p = place("parley-pi-files-");
      const s = await state(start(p, []));
      const file = String(s["sessionFile"]);
      expect(dirname(file)).toBe(join(p.agentDir, "sessions", cwdSlug(p.cwd)));
      expect(basename(file)).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d-\\d{3}Z_${s["sessionId"]}\\.jsonl$`));
      const envDir = join(p.home, "env-sessions");
      expect(dirname(String((await state(start(p, [], { PI_CODING_AGENT_SESSION_DIR: envDir })))["sessionFile"]))).toBe(envDir);
      const flagDir = join(p.home, "flag-sessions");
      expect(dirname(String((await state(start(p, ["--session-dir", flagDir], { PI_CODING_AGENT_SESSION_DIR: envDir })))["sessionFile"]))).toBe(flagDir);
    },
    3 * MINUTE,
  );

  it(
    "--session by partial id, --session-id, --fork, and -c over the sessions ~/.parley holds",
    async () => {
      const p = place("parley-pi-files-");
      const t = "2026-01-01T00:00:00.000Z";
      const header = (id: string) => JSON.stringify({ type: "session", version: 3, id, timestamp: t, cwd: p.cwd });
      const user = JSON.stringify({ type: "message", id: "a0000001", parentId: null, timestamp: t, message: { role: "user", content: "hello", timestamp: 1 } });
      const piId = "0199aaaa-0000-7000-8000-000000000001";
      write(join(p.agentDir, "sessions", cwdSlug(p.cwd), `2026-01-01T00-00-00-000Z_${piId}.jsonl`), `${header(piId)}\n${user}\n`);
      expect((await state(start(p, ["--session", "0199aaaa"])))["sessionId"]).toBe(piId);

      const created = await state(start(p, ["--session-id", "my-id-1"]));
      expect(created["sessionId"]).toBe("my-id-1");

      const forked = await state(start(p, ["--fork", "0199aaaa"]));
      expect(forked["sessionId"]).not.toBe(piId);
      expect(forked["messageCount"]).toBe(1);
      expect(dirname(String(forked["sessionFile"]))).toBe(join(p.agentDir, "sessions", cwdSlug(p.cwd)));

      // A session an earlier parley wrote under ~/.parley is continued when it is the latest.
      const oldId = "0199bbbb-0000-7000-8000-000000000002";
      const legacy = join(p.home, ".parley", "sessions", cwdSlug(p.cwd), `2026-02-01T00-00-00-000Z_${oldId}.jsonl`);
      write(legacy, `${header(oldId)}\n${user}\n`);
      const far = new Date(Date.now() + 60_000);
      utimesSync(legacy, far, far);
      const continued = start(p, ["-c"]);
      expect((await state(continued))["sessionId"]).toBe(oldId);
      // One writer per session file: the next opens it once this one has ended.
      continued.closeInput();
      await continued.exited;
      expect((await state(start(p, ["--session", "0199bbbb"])))["sessionId"]).toBe(oldId);
    },
    4 * MINUTE,
  );

  it(
    "an id prefix that several sessions share is refused for --session and --fork (exit 1, the matches listed), as in the newest pi; an exact id or a longer prefix still opens",
    async () => {
      const p = place("parley-pi-files-");
      const t = "2026-01-01T00:00:00.000Z";
      const dir = join(p.agentDir, "sessions", cwdSlug(p.cwd));
      const ids = ["0198d640-1111-7aaa-aaaa-aaaaaaaaaaaa", "0198d640-2222-7bbb-bbbb-bbbbbbbbbbbb"];
      for (const id of ids) {
        const header = JSON.stringify({ type: "session", version: 3, id, timestamp: t, cwd: p.cwd });
        const user = JSON.stringify({ type: "message", id: "a0000001", parentId: null, timestamp: t, message: { role: "user", content: id, timestamp: 1 } });
        write(join(dir, `2026-01-01T00-00-00-000Z_${id}.jsonl`), `${header}\n${user}\n`);
      }
      const before = readdirSync(dir).sort();
      for (const flag of ["--session", "--fork"]) {
        const agent = start(p, [flag, "0198d640"]);
        const { code } = await agent.exited;
        expect(code).toBe(1);
        expect(agent.stderr()).toContain(`${flag} 0198d640: the id is ambiguous, 2 sessions start with it`);
        for (const id of ids) expect(agent.stderr()).toContain(id);
      }
      // Nothing was opened, forked or written.
      expect(readdirSync(dir).sort()).toEqual(before);
      expect((await state(start(p, ["--session", ids[1]!])))["sessionId"]).toBe(ids[1]);
      expect((await state(start(p, ["--session", "0198d640-1"])))["sessionId"]).toBe(ids[0]);
    },
    3 * MINUTE,
  );

  it(
    "context files (global, then from the outermost folder in), SYSTEM.md, APPEND_SYSTEM.md and the prompt flags",
    async () => {
      const p = place("parley-pi-files-");
      write(join(p.agentDir, "AGENTS.md"), "GLOBAL-RULES");
      write(join(dirname(p.cwd), "CLAUDE.md"), "PARENT-RULES");
      write(join(p.cwd, "AGENTS.md"), "PROJECT-RULES");
      write(join(p.cwd, ".pi", "SYSTEM.md"), "CUSTOM-SYSTEM");
      write(join(p.agentDir, "trust.json"), { [p.cwd]: true });
      write(join(p.agentDir, "APPEND_SYSTEM.md"), "APPENDED-GLOBAL");
      const prompt = await notified(start(p, ["--no-session", "-e", SHOW]), "show-prompt");
      expect(prompt.startsWith("CUSTOM-SYSTEM")).toBe(true);
      const order = ["CUSTOM-SYSTEM", "APPENDED-GLOBAL", "GLOBAL-RULES", "PARENT-RULES", "PROJECT-RULES"].map((s) => prompt.indexOf(s));
      expect(order.every((i) => i >= 0)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);

      write(join(p.home, "extra.md"), "FROM-A-FILE");
      const flags = await notified(
        start(p, [
          "--no-session",
          "-e",
          SHOW,
          "-nc",
          "--system-prompt",
          "FLAG-SYSTEM",
          "--append-system-prompt",
          join(p.home, "extra.md"),
          "--append-system-prompt",
          "INLINE-TEXT",
        ]),
        "show-prompt",
      );
      expect(flags.startsWith("FLAG-SYSTEM")).toBe(true);
      expect(flags).toContain("FROM-A-FILE");
      expect(flags).toContain("INLINE-TEXT");
      expect(flags).not.toContain("APPENDED-GLOBAL");
      expect(flags).not.toContain("PROJECT-RULES");
    },
    3 * MINUTE,
  );

  it(
    "tool flags: --tools, --exclude-tools, --no-tools, --no-builtin-tools",
    async () => {
      const p = place("parley-pi-files-");
      const tools = async (args: string[]) => (await notified(start(p, ["--no-session", "-e", SHOW, ...args]), "show-tools")).split(",").filter(Boolean);
      expect(await tools([])).toEqual(["read", "bash", "edit", "write"]);
      expect(await tools(["-t", "read,grep"])).toEqual(["read", "grep"]);
      expect(await tools(["-xt", "bash"])).toEqual(["read", "edit", "write"]);
      expect(await tools(["-nt"])).toEqual([]);
      expect(await tools(["-nbt"])).toEqual([]);
    },
    3 * MINUTE,
  );
});

describe("first contact on the command line", () => {
  it(
    "a flag error comes first and alone: no banner, exit 1 (as in pi)",
    async () => {
      const p = place("parley-pi-files-");
      const agent = start(p, ["--bogus"]);
      const { code } = await agent.exited;
      expect(code).toBe(1);
      const lines = agent.stderr().trim().split("\n");
      expect(lines[0]).toBe("parley: Unknown option --bogus");
      expect(agent.stderr()).not.toContain("offline");
    },
    MINUTE,
  );

  it(
    // With a terminal on both sides bare parley says what to run (cli-args.test.ts, mode choice);
    // through pipes it is print mode, as pi: nothing piped in, nothing asked, exit 0.
    "bare parley through pipes is print mode, as pi: with nothing piped in it prints nothing and exits 0",
    async () => {
      const p = place("parley-pi-files-");
      const agent = spawnAgent(PARLEY_BIN, [], { cwd: p.cwd, env: { HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir } });
      agent.closeInput();
      const { code } = await agent.exited;
      expect(code).toBe(0);
      expect(agent.records).toEqual([]);
      expect(agent.stderr()).not.toMatch(/^\s+at /m);
    },
    MINUTE,
  );

  it(
    "--help lists the API-key variables, the offline default and pi's flags",
    async () => {
      const p = place("parley-pi-files-");
      const help = execFileSync(PARLEY_BIN, ["--help"], { encoding: "utf8", env: { ...process.env, HOME: p.home } });
      for (const text of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "PI_CODING_AGENT_DIR", "offline demo model", "--no-themes", "-nbt", "--session-id", "--fork"])
        expect(help).toContain(text);
    },
    MINUTE,
  );

  it(
    "a missing -e file stops parley with exit 1 and one message",
    async () => {
      const p = place("parley-pi-files-");
      const agent = start(p, ["-e", join(p.home, "missing.ts")]);
      const { code } = await agent.exited;
      expect(code).toBe(1);
      expect(agent.stderr().match(/not found/g)?.length).toBe(1);
      const broken = start(p, ["-e", resolve(import.meta.dirname, "fixtures/syntax-error.ts")]);
      expect((await broken.exited).code).toBe(1);
      expect(broken.stderr().match(/Failed to load extension/g)?.length).toBe(1);
    },
    MINUTE,
  );

  it(
    "-e builtin:<name> (the newest pi's built-in extensions): they load even with -ne, an unknown one stops parley as it stops pi",
    async () => {
      const p = place("parley-pi-files-");
      const known = start(p, ["-ne", "-e", "builtin:mcp", "-e", "builtin:tool-search", "-e", "builtin:codemode"]);
      const commands = ((await known.request({ type: "get_commands" }))["data"] as { commands: { name: string }[] }).commands;
      expect(commands.map((c) => c.name)).toEqual(["mcp"]);
      expect(known.stderr()).not.toContain("builtin:codemode");
      known.closeInput();
      expect((await known.exited).code).toBe(0);
      const unknown = start(p, ["-e", "builtin:nope"]);
      expect((await unknown.exited).code).toBe(1);
      expect(unknown.stderr()).toContain("Unknown built-in extension: builtin:nope");
    },
    MINUTE,
  );
});
