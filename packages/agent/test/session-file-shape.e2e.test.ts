/**
 * The session file a conversation leaves is pi's, line for line: the same entries in the same
 * order, each with pi's keys in pi's order (so a tool that reads pi's files reads parley's, and
 * parley resumes its own files through the fast path for pi's line shape). pi 0.73.1 and parley
 * run the same conversation through the spawned CLI; what must differ is normalised away: ids,
 * times, the session's folder, token counts (the system prompts differ) and the newest pi's tool
 * `durationMs` and an assistant message's `thinkingLevel` (0.73.1 has neither).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OFFLINE_PROVIDER } from "./helpers/offline-agents.js";
import { closedAfterEach, MINUTE, NO_KEYS, ok, place, write } from "./helpers/pi-home.js";
import { PARLEY_BIN, PI_BIN, spawnAgent, type AgentProcess } from "./helpers/spawn.js";

const running = closedAfterEach();

/**
 * Extension commands: /mark appends a custom entry and sends a custom message; /back labels the
 * first reply and goes back to it with a summary of the branch left behind.
 */
const MARKER = `export default function (pi) {
  pi.registerCommand("mark", { description: "d", handler: async () => {
    pi.appendEntry("mark", { n: 1 });
    pi.sendMessage({ customType: "note", content: "a note", display: true, details: { k: "v" } });
  } });
  pi.registerCommand("back", { description: "d", handler: async (_args, ctx) => {
    const first = ctx.sessionManager.getBranch().find((e) => e.type === "message" && e.message.role === "assistant");
    pi.setLabel(first.id, "first reply");
    await ctx.navigateTree(first.id, { summarize: true });
    ctx.ui.notify("back done", "info");
  } });
}
`;

async function settled(agent: AgentProcess, message: string): Promise<void> {
  const from = agent.records.length;
  await ok(agent, { type: "prompt", message });
  await agent.waitFor((r) => r.type === "agent_end", MINUTE, from);
}

/**
 * parley's file without the system messages it records as pi 1.6 does: a documented difference
 * from pi 0.73.1, which records none (pi 1.6.0 is the reference; system-messages.e2e.test.ts
 * compares parley with it). Each system message entry is left out and its children hang from its
 * parent instead; a compaction's `systemMessage` snapshot is left out. Every other line stays
 * byte for byte.
 */
function withoutSystemMessages(lines: string[]): string[] {
  const replaced = new Map<string, string | null>();
  const kept: string[] = [];
  for (const line of lines) {
    const entry = JSON.parse(line) as { type: string; id?: string; parentId?: string | null; message?: { role?: string }; systemMessage?: unknown };
    if (entry.type === "message" && entry.message?.role === "system" && entry.id !== undefined) {
      replaced.set(entry.id, entry.parentId ?? null);
      continue;
    }
    let parent = entry.parentId;
    while (typeof parent === "string" && replaced.has(parent)) parent = replaced.get(parent);
    if (parent === entry.parentId && entry.systemMessage === undefined) {
      kept.push(line);
      continue;
    }
    const { systemMessage: _snapshot, ...rest } = entry;
    kept.push(JSON.stringify({ ...rest, parentId: parent }));
  }
  return kept;
}

/** The file's lines; parley's without the system messages pi 0.73.1 does not record (see withoutSystemMessages). */
function fileLines(file: string, bin: string): string[] {
  const lines = readFileSync(file, "utf8").trim().split("\n");
  return bin === PARLEY_BIN ? withoutSystemMessages(lines) : lines;
}

/** The file's lines with what may differ between the agents replaced by placeholders. */
function normalised(lines: string[], folder: string): string[] {
  const ids = new Map<string, string>();
  const idOf = (id: string): string => {
    if (!ids.has(id)) ids.set(id, `E${ids.size}`);
    return ids.get(id) as string;
  };
  return lines.map((line, i) =>
    line
      .replace(
        /"(id|parentId|targetId|toolCallId|firstKeptEntryId|fromId)":"([^"]+)"/g,
        (_m, key: string, id: string) => `"${key}":"${i === 0 ? "SESSION" : idOf(id)}"`,
      )
      .replace(/"timestamp":("[^"]+"|\d+)/g, '"timestamp":"T"')
      .replaceAll(folder, "FOLDER")
      .replace(/"(input|output|cacheRead|cacheWrite|totalTokens|tokensBefore)":\d+/g, '"$1":0')
      // A summary's wording is each agent's own (their prompts and preambles differ); the newest
      // pi records the summary call's usage, 0.73.1 none.
      .replace(/^(\{"type":"(?:compaction|branch_summary)",.*?"summary":)"(?:[^"\\]|\\.)*"/, '$1"SUMMARY"')
      .replace(/^(\{"type":"(?:compaction|branch_summary)",.*),"usage":\{[^{}]*"cost":\{[^{}]*\}\}/, "$1")
      .replace(/,"durationMs":\d+/g, "")
      // The newest pi's loop records the level an assistant reply was asked at; 0.73.1's does not.
      .replace(/,"thinkingLevel":"(?:off|minimal|low|medium|high|xhigh|max)"(?=\}\}$)/, "")
      // Where a branch summary came from: the target in 0.73.1, the leaf left behind in the newest pi (parley's).
      .replace(/^(\{"type":"branch_summary",.*?"fromId":)"[^"]*"/, '$1"FROM"'),
  );
}

async function conversation(bin: string): Promise<string[]> {
  const p = place("parley-file-shape-");
  const marker = join(p.home, "marker.ts");
  write(marker, MARKER);
  // A small budget, so that the compaction below cuts inside the conversation (at its last reply).
  write(join(p.agentDir, "settings.json"), { compaction: { keepRecentTokens: 1 } });
  const agent = spawnAgent(bin, ["--mode", "rpc", "-e", OFFLINE_PROVIDER, "-e", marker, "--provider", "offline", "--model", "echo"], {
    cwd: p.cwd,
    env: { ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir },
  });
  running.push(agent);
  await settled(agent, "Reply with just: hi");
  await ok(agent, { type: "set_session_name", name: "named" });
  await ok(agent, { type: "bash", command: "echo from-bash" });
  await ok(agent, { type: "prompt", message: "/mark" });
  await agent.waitFor((r) => r.type === "message_end" && JSON.stringify(r).includes("a note"), MINUTE);
  await settled(agent, "please use the bash tool");
  await ok(agent, { type: "set_thinking_level", level: "high" });
  await ok(agent, { type: "compact" });
  await ok(agent, { type: "prompt", message: "/back" });
  await agent.waitFor((r) => r.type === "extension_ui_request" && r["message"] === "back done", MINUTE);
  const file = ((await ok(agent, { type: "get_state" }))["data"] as { sessionFile: string }).sessionFile;
  agent.closeInput();
  await agent.exited;
  return normalised(fileLines(file, bin), p.cwd);
}

/** A conversation, then a fork at its second prompt and a clone of the fork: the three files. */
async function forkedFiles(bin: string): Promise<string[][]> {
  const p = place("parley-file-shape-fork-");
  const agent = spawnAgent(bin, ["--mode", "rpc", "-e", OFFLINE_PROVIDER, "--provider", "offline", "--model", "echo"], {
    cwd: p.cwd,
    env: { ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir },
  });
  running.push(agent);
  const fileNow = async () => ((await ok(agent, { type: "get_state" }))["data"] as { sessionFile: string }).sessionFile;
  await settled(agent, "Reply with just: one");
  await ok(agent, { type: "set_session_name", name: "original" });
  await settled(agent, "Reply with just: two");
  const original = await fileNow();
  const forkable = ((await ok(agent, { type: "get_fork_messages" }))["data"] as { messages: { entryId: string }[] }).messages;
  await ok(agent, { type: "fork", entryId: forkable[1]?.entryId });
  await settled(agent, "Reply with just: three");
  const fork = await fileNow();
  await ok(agent, { type: "clone" });
  await settled(agent, "Reply with just: four");
  const clone = await fileNow();
  agent.closeInput();
  await agent.exited;
  // Where a file came from is another file's path: which one is what counts.
  const names = new Map([
    [original, "ORIGINAL"],
    [fork, "FORK"],
  ]);
  const parent = (lines: string[]) =>
    lines.map((line) => line.replace(/"parentSession":"([^"]+)"/, (_m, path: string) => `"parentSession":"${names.get(path) ?? "OTHER"}"`));
  return [original, fork, clone].map((file) => parent(normalised(fileLines(file, bin), p.cwd)));
}

describe("the session file parley writes", () => {
  it(
    "fork and clone write pi's files: the copied path, the parent session, then the new entries (pi 0.73.1 and parley alike)",
    async () => {
      const pi = await forkedFiles(PI_BIN);
      const parley = await forkedFiles(PARLEY_BIN);
      expect(parley).toEqual(pi);
      expect(pi[1]?.[0]).toContain('"parentSession":"ORIGINAL"');
      expect(pi[2]?.[0]).toContain('"parentSession":"FORK"');
    },
    5 * MINUTE,
  );

  it(
    "is pi's, line for line: entries, order and keys (pi 0.73.1 and parley alike)",
    async () => {
      const pi = await conversation(PI_BIN);
      const parley = await conversation(PARLEY_BIN);
      expect(parley).toEqual(pi);
      // The scenario covers what it means to: the session's start, a name, user bash, a tool call, custom entries.
      const types = pi.map(
        (line) => (JSON.parse(line) as { type: string; message?: { role: string } }).message?.role ?? (JSON.parse(line) as { type: string }).type,
      );
      expect(types).toEqual(
        expect.arrayContaining([
          "session",
          "model_change",
          "thinking_level_change",
          "session_info",
          "bashExecution",
          "toolResult",
          "custom",
          "custom_message",
          "compaction",
          "label",
          "branch_summary",
        ]),
      );
    },
    5 * MINUTE,
  );
});
