/**
 * The model and thinking level each session starts with, and what the session records of them,
 * as pi's session start decides them (createAgentSession, run again for every session a process
 * opens): a model or level given on the command line holds for every session (a switch, a new
 * session); otherwise a session with messages continues with its own, and a new session takes the
 * user's last choice. A new session records its model and level before its session_start; a
 * session with messages but no level recorded gets one. pi 1.6.0 (`pi-newest`) and parley are driven
 * alike through the spawned CLI and must answer alike, entry for entry.
 */
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OFFLINE_PROVIDER } from "./helpers/offline-agents.js";
import { alike, closedAfterEach, MINUTE, NO_KEYS, ok, place, write, type Place } from "./helpers/pi-home.js";
import { spawnAgent, type AgentProcess, type Rec } from "./helpers/spawn.js";

const running = closedAfterEach();

/** Tells, at each session_start, the model and level entries the session's path holds then. */
const PROBE = `export default function (pi) {
  pi.on("session_start", (event, ctx) => {
    const seen = ctx.sessionManager.getBranch().flatMap((e) =>
      e.type === "model_change" ? ["model " + e.provider + "/" + e.modelId] : e.type === "thinking_level_change" ? ["level " + e.thinkingLevel] : []);
    ctx.ui.notify("start " + event.reason + ": " + seen.join(", "), "info");
  });
}
`;

/** A world with a second model that has a key (models.json), the probe, and two stored sessions. */
function world(prefix: string): { p: Place; probe: string; recorded: string; unrecorded: string } {
  const p = place(prefix);
  write(join(p.agentDir, "models.json"), {
    providers: { other: { baseUrl: "http://localhost:1", api: "openai-completions", apiKey: "k", models: [{ id: "m2", reasoning: true }] } },
  });
  write(join(p.agentDir, "settings.json"), { defaultProvider: "offline", defaultModel: "echo" });
  const probe = join(p.home, "probe.ts");
  write(probe, PROBE);
  const header = (id: string) => ({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: p.cwd });
  const at = "2026-01-01T00:00:01.000Z";
  const user = { role: "user", content: "old", timestamp: 1 };
  const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const assistant = (api: string, provider: string, model: string) => ({
    role: "assistant",
    content: [{ type: "text", text: "old reply" }],
    api,
    provider,
    model,
    usage,
    stopReason: "stop",
    timestamp: 2,
  });
  // A session that used other/m2 at level "low".
  const recorded = join(p.home, "stored", "recorded.jsonl");
  write(
    recorded,
    `${[
      header("aaaaaaaa-1111-4111-8111-111111111111"),
      { type: "model_change", id: "e1", parentId: null, timestamp: at, provider: "other", modelId: "m2" },
      { type: "thinking_level_change", id: "e2", parentId: "e1", timestamp: at, thinkingLevel: "low" },
      { type: "message", id: "e3", parentId: "e2", timestamp: at, message: user },
      { type: "message", id: "e4", parentId: "e3", timestamp: at, message: assistant("openai-completions", "other", "m2") },
    ]
      .map((e) => JSON.stringify(e))
      .join("\n")}\n`,
  );
  // A session with a message and nothing recorded of model or level (another tool wrote it).
  const unrecorded = join(p.home, "stored", "unrecorded.jsonl");
  write(
    unrecorded,
    `${[
      header("bbbbbbbb-1111-4111-8111-111111111111"),
      { type: "message", id: "f1", parentId: null, timestamp: at, message: user },
      { type: "message", id: "f2", parentId: "f1", timestamp: at, message: assistant("offline-faux", "offline", "echo") },
    ]
      .map((e) => JSON.stringify(e))
      .join("\n")}\n`,
  );
  return { p, probe, recorded, unrecorded };
}

function start(bin: string, p: Place, args: string[]): AgentProcess {
  const agent = spawnAgent(bin, ["--mode", "rpc", "-e", OFFLINE_PROVIDER, ...args], {
    cwd: p.cwd,
    env: { ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir },
  });
  running.push(agent);
  return agent;
}

/** The model and level get_state reports. */
async function state(agent: AgentProcess): Promise<string> {
  const data = (await ok(agent, { type: "get_state" }))["data"] as { model: { provider: string; id: string }; thinkingLevel: string };
  return `${data.model.provider}/${data.model.id} ${data.thinkingLevel}`;
}

/**
 * What the probe said at every session_start so far. pi 0.73.1's RPC commands started a switched-to
 * session's extensions twice; a repeat counts once (pi 1.6 starts them once).
 */
const probes = (agent: AgentProcess): string[] =>
  agent.records
    .flatMap((r: Rec) => (r.type === "extension_ui_request" && typeof r["message"] === "string" && r["message"].startsWith("start ") ? [r["message"]] : []))
    .filter((said, i, all) => said !== all[i - 1]);

/** The model and level entries of a session file, in order. */
function recordedSettings(file: string): string[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .flatMap((line) => {
      const e = JSON.parse(line) as Record<string, string>;
      return e["type"] === "model_change"
        ? [`model ${e["provider"]}/${e["modelId"]}`]
        : e["type"] === "thinking_level_change"
          ? [`level ${e["thinkingLevel"]}`]
          : [];
    });
}

async function sessionFile(agent: AgentProcess): Promise<string> {
  return ((await ok(agent, { type: "get_state" }))["data"] as { sessionFile: string }).sessionFile;
}

/** A reply, so that a new session's file is written (pi and parley write it at the first assistant message). */
async function reply(agent: AgentProcess): Promise<void> {
  const from = agent.records.length;
  await ok(agent, { type: "prompt", message: "Reply with just: done" });
  await agent.waitFor((r) => r.type === "agent_end", MINUTE, from);
}

describe("the model and level a session starts with, recorded in it (pi and parley alike)", () => {
  it(
    "--model and --thinking hold for every session of the process: a switch, a new session after set_model",
    async () => {
      const seen = await alike(async (bin) => {
        const { p, probe, recorded } = world("parley-start-settings-cli-");
        const agent = start(bin, p, ["-e", probe, "--provider", "offline", "--model", "echo", "--thinking", "high"]);
        const states = [await state(agent)];
        await ok(agent, { type: "switch_session", sessionPath: recorded });
        states.push(await state(agent));
        await ok(agent, { type: "set_model", provider: "other", modelId: "m2" });
        await ok(agent, { type: "new_session" });
        states.push(await state(agent));
        await reply(agent);
        const fresh = recordedSettings(await sessionFile(agent));
        return { states, probes: probes(agent), fresh, stored: recordedSettings(recorded) };
      });
      expect(seen.states).toEqual(["offline/echo high", "offline/echo high", "offline/echo high"]);
      // The new session recorded its model and level first, before its session_start.
      expect(seen.fresh).toEqual(["model offline/echo", "level high"]);
      expect(seen.probes[0]).toBe("start startup: model offline/echo, level high");
    },
    5 * MINUTE,
  );

  it(
    "without them: a switch continues with the session's own, a new session takes start-up's, an unrecorded level is recorded",
    async () => {
      const seen = await alike(async (bin) => {
        const { p, probe, recorded, unrecorded } = world("parley-start-settings-");
        const agent = start(bin, p, ["-e", probe]);
        const states = [await state(agent)];
        await ok(agent, { type: "switch_session", sessionPath: recorded });
        states.push(await state(agent));
        await ok(agent, { type: "new_session" });
        states.push(await state(agent));
        await ok(agent, { type: "switch_session", sessionPath: unrecorded });
        states.push(await state(agent));
        return { states, probes: probes(agent), stored: recordedSettings(recorded), unrecorded: recordedSettings(unrecorded) };
      });
      expect(seen.states).toEqual(["offline/echo medium", "other/m2 low", "offline/echo medium", "offline/echo medium"]);
      // Only a path without a level gets one; the stored session that had one is not written to.
      expect(seen.stored).toEqual(["model other/m2", "level low"]);
      expect(seen.unrecorded).toEqual(["level medium"]);
    },
    5 * MINUTE,
  );

  it(
    "at start-up: --session keeps the session's model under --thinking, its level under --model",
    async () => {
      const seen = await alike(async (bin) => {
        const { p, recorded, unrecorded } = world("parley-start-settings-resume-");
        // Each its own copy: one file has one writer (parley refuses a second, with pi it would
        // be a race), and neither start-up may see what the other records.
        const copy = recorded.replace(/\.jsonl$/, "-copy.jsonl");
        copyFileSync(recorded, copy);
        const levelOnly = start(bin, p, ["--session", recorded, "--thinking", "high"]);
        const modelOnly = start(bin, p, ["--session", copy, "--provider", "offline", "--model", "echo"]);
        const plain = start(bin, p, ["--session", unrecorded]);
        const states = [await state(levelOnly), await state(modelOnly), await state(plain)];
        return { states, unrecorded: recordedSettings(unrecorded) };
      });
      expect(seen.states).toEqual(["other/m2 high", "offline/echo low", "offline/echo medium"]);
      expect(seen.unrecorded).toEqual(["level medium"]);
    },
    5 * MINUTE,
  );
});

/**
 * Where pi 1.6 differs from 0.73.1: set_model and set_thinking_level change the session only
 * (0.73.1 saved them as settings' defaults, so a new session took them), and a model switch takes
 * the model's own level (settings `modelThinkingLevels`), else `defaultThinkingLevel`, else keeps
 * the current one. pi 1.6.0 and parley are driven alike.
 */
describe("the newest pi's defaults: settings' levels, choices that stay the session's", () => {
  it("set_model takes the model's own level or the default; a new session starts from settings again", async () => {
    const seen = await alike(async (bin) => {
      const { p, probe } = world("parley-start-settings-newest-");
      write(join(p.agentDir, "settings.json"), {
        defaultProvider: "offline",
        defaultModel: "echo",
        defaultThinkingLevel: "low",
        modelThinkingLevels: { "other/m2": "minimal", "offline/echo": "max" },
      });
      const agent = start(bin, p, ["-e", probe]);
      // A new session's model has its own level: "max", the highest this model has ("high").
      const states = [await state(agent)];
      await ok(agent, { type: "set_model", provider: "other", modelId: "m2" });
      states.push(await state(agent));
      await ok(agent, { type: "set_thinking_level", level: "high" });
      await ok(agent, { type: "new_session" });
      states.push(await state(agent));
      return { states, probes: probes(agent) };
    });
    expect(seen).toEqual({
      states: ["offline/echo high", "other/m2 minimal", "offline/echo high"],
      probes: ["start startup: model offline/echo, level high", "start new: model offline/echo, level high"],
    });
  });

  it("without a model's own level, a switch takes defaultThinkingLevel; without that, it keeps the current level", async () => {
    const seen = await alike(async (bin) => {
      const { p } = world("parley-start-settings-default-");
      write(join(p.agentDir, "settings.json"), { defaultProvider: "offline", defaultModel: "echo", defaultThinkingLevel: "low" });
      const withDefault = start(bin, p, []);
      await ok(withDefault, { type: "set_thinking_level", level: "high" });
      await ok(withDefault, { type: "set_model", provider: "other", modelId: "m2" });
      const other = world("parley-start-settings-nodefault-");
      const withoutDefault = start(bin, other.p, []);
      await ok(withoutDefault, { type: "set_thinking_level", level: "high" });
      await ok(withoutDefault, { type: "set_model", provider: "other", modelId: "m2" });
      return [await state(withDefault), await state(withoutDefault)];
    });
    expect(seen).toEqual(["other/m2 low", "other/m2 high"]);
  });
});
