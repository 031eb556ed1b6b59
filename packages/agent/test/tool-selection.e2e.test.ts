/**
 * The tools a session starts with, through the spawned CLI, as the newest pi chooses them:
 * settings' `defaultTools` (the user's, then the trusted project's), `--tools` with +name/-name
 * entries or patterns, `--exclude-tools` patterns, and the error for a mixed `--tools` list.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { closedAfterEach, MINUTE, NO_KEYS, place, write, type Place } from "./helpers/pi-home.js";
import { PARLEY_BIN, spawnAgent, type AgentProcess } from "./helpers/spawn.js";

const running = closedAfterEach();

/** Registers an extension tool and says which tools are active at session_start. */
const PROBE = `export default function (pi) {
  pi.registerTool({ name: "ext_tool", label: "e", description: "d", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [], details: {} }) });
  pi.on("session_start", (_e, ctx) => ctx.ui.notify("tools " + pi.getActiveTools().join(","), "info"));
}
`;

function start(p: Place, args: string[]): AgentProcess {
  const probe = join(p.home, "probe.ts");
  write(probe, PROBE);
  const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--no-session", "-e", probe, ...args], {
    cwd: p.cwd,
    env: { ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir },
  });
  running.push(agent);
  return agent;
}

async function activeTools(agent: AgentProcess): Promise<string[]> {
  const said = await agent.waitFor((r) => r.type === "extension_ui_request" && String(r["message"]).startsWith("tools "), MINUTE);
  return String(said["message"]).slice("tools ".length).split(",").filter(Boolean).sort();
}

describe("the tools a session starts with", () => {
  it("settings' defaultTools: the user's list, then the trusted project's +name/-name entries", async () => {
    const p = place("parley-default-tools-");
    write(join(p.agentDir, "settings.json"), { defaultTools: ["read", "grep"] });
    write(join(p.cwd, ".pi", "settings.json"), { defaultTools: ["+ls", "-grep"] });
    expect(await activeTools(start(p, ["--approve"]))).toEqual(["ext_tool", "ls", "read"]);
    // An untrusted project's settings do not count.
    expect(await activeTools(start(p, ["--no-approve"]))).toEqual(["ext_tool", "grep", "read"]);
  });

  it("--tools +name/-name change the defaults; names and patterns are an allowlist; --exclude-tools patterns", async () => {
    const p = place("parley-tools-flags-");
    expect(await activeTools(start(p, ["--tools", "+grep,-bash"]))).toEqual(["edit", "ext_tool", "grep", "read", "write"]);
    expect(await activeTools(start(p, ["--tools", "read,gr*"]))).toEqual(["grep", "read"]);
    expect(await activeTools(start(p, ["--exclude-tools", "b*,ext_*"]))).toEqual(["edit", "read", "write"]);
  });

  it("a --tools list mixing names and +name/-name entries stops parley with pi's words", async () => {
    const agent = start(place("parley-tools-mixed-"), ["--tools", "read,+grep"]);
    const { code } = await agent.exited;
    expect(code).not.toBe(0);
    expect(agent.stderr()).toContain("--tools: tool names cannot be mixed with +name or -name entries");
    expect(agent.records).toEqual([]);
  });
});
