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
  // What is registered at all, and what asking for every tool by name activates.
  pi.registerCommand("registered", {
    handler: async (_args, ctx) => {
      pi.setActiveTools(["read", "bash", "grep", "ext_tool"]);
      ctx.ui.notify("registered " + pi.getAllTools().map((t) => t.name).sort().join(",") + " active " + pi.getActiveTools().sort().join(","), "info");
    },
  });
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

async function activeTools(agent: AgentProcess, from = 0): Promise<string[]> {
  const said = await agent.waitFor((r) => r.type === "extension_ui_request" && String(r["message"]).startsWith("tools "), MINUTE, from);
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

  it("tools outside --tools, --no-tools or --exclude-tools are not registered at all (newest pi)", async () => {
    const p = place("parley-tools-registered-");
    const registered = async (args: string[]): Promise<string> => {
      const agent = start(p, args);
      await activeTools(agent);
      agent.send({ type: "prompt", message: "/registered" });
      const said = await agent.waitFor((r) => r.type === "extension_ui_request" && String(r["message"]).startsWith("registered "), MINUTE);
      return String(said["message"]);
    };
    // codemode and tool_search are the built-in extensions' (newest pi): registered, inactive until asked for.
    expect(await registered(["--exclude-tools", "bash,ext_*"])).toBe("registered codemode,edit,find,grep,ls,read,tool_search,write active grep,read");
    expect(await registered(["--tools", "read,ext_tool"])).toBe("registered ext_tool,read active ext_tool,read");
    expect(await registered(["--no-tools"])).toBe("registered  active ");
    // --no-builtin-tools only starts the built-ins inactive: they stay registered and can be activated.
    expect(await registered(["--no-builtin-tools"])).toBe(
      "registered bash,codemode,edit,ext_tool,find,grep,ls,read,tool_search,write active bash,ext_tool,grep,read",
    );
  });

  it("ctx.reload() activates tools newly added to settings' defaultTools and keeps the rest of the session's (newest pi)", async () => {
    const p = place("parley-default-tools-reload-");
    const settings = join(p.agentDir, "settings.json");
    write(settings, { defaultTools: ["read", "bash"] });
    const reloader = join(p.home, "reloader.ts");
    write(
      reloader,
      `import { writeFileSync } from "node:fs";
export default function (pi) {
  pi.registerCommand("grow", { handler: async (_a, ctx) => {
    pi.setActiveTools(["read", "ext_tool"]);
    writeFileSync(${JSON.stringify(settings)}, JSON.stringify({ defaultTools: ["read", "bash", "grep"] }));
    await ctx.reload();
  } });
}
`,
    );
    const agent = start(p, ["-e", reloader]);
    expect(await activeTools(agent)).toEqual(["bash", "ext_tool", "read"]);
    const from = agent.records.length;
    agent.send({ type: "prompt", message: "/grow" });
    await agent.waitFor((r) => r.type === "extension_ui_request" && String(r["message"]).startsWith("tools "), MINUTE, from);
    // bash stays off (the session turned it off, the setting did not newly add it); grep is new in defaultTools.
    expect(await activeTools(agent, from)).toEqual(["ext_tool", "grep", "read"]);
  });

  it("a --tools list mixing names and +name/-name entries stops parley with pi's words", async () => {
    const agent = start(place("parley-tools-mixed-"), ["--tools", "read,+grep"]);
    const { code } = await agent.exited;
    expect(code).not.toBe(0);
    expect(agent.stderr()).toContain("--tools: tool names cannot be mixed with +name or -name entries");
    expect(agent.records).toEqual([]);
  });
});
