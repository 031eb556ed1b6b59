/**
 * The session file a conversation leaves is pi's, line for line: the same entries in the same
 * order, each with pi's keys in pi's order (so a tool that reads pi's files reads parley's, and
 * parley resumes its own files through the fast path for pi's line shape). pi 1.6.0 (`pi-newest`, on
 * this Node) and parley run the same conversation through the spawned CLI; what must differ is
 * normalised away: ids, times, durations, the session's folder, token counts and summaries (the
 * system prompts differ), and the prose of the recorded system messages.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OFFLINE_PROVIDER } from "./helpers/offline-agents.js";
import { closedAfterEach, MINUTE, NO_KEYS, ok, place, write } from "./helpers/pi-home.js";
import { PARLEY_BIN, PI_NEWEST_CLI, spawnAgent, type AgentProcess } from "./helpers/spawn.js";

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

type Json = Record<string, unknown>;
const isJson = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);

/** A JSON schema without its `description`s. */
const withoutDescriptions = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema), (key, value) => (key === "description" ? undefined : value));

/**
 * A recorded system message with each agent's own prose made comparable: the prompt's sections
 * (parley keeps its prompt whole in one `preamble`, pi 1.6 splits its own into named sections) and
 * the declared tools' descriptions. Where it is, its other keys and the tools' names, parameter
 * structure and `constrainedSampling` stay compared.
 */
function systemMessageShape(message: Json): Json {
  const out: Json = { ...message };
  if (message["sections"] !== undefined) out["sections"] = "SECTIONS";
  if (Array.isArray(message["toolsAdded"]))
    out["toolsAdded"] = message["toolsAdded"].map((t: unknown) => {
      const { description: _d, parameters, ...rest } = isJson(t) ? t : {};
      return { ...rest, parameters: withoutDescriptions(parameters) };
    });
  return out;
}

/** The file's lines, system messages (entries, a compaction's snapshot) with their prose made comparable. */
function fileLines(file: string): string[] {
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => {
      const entry = JSON.parse(line) as Json;
      if (isJson(entry["message"]) && entry["message"]["role"] === "system") return JSON.stringify({ ...entry, message: systemMessageShape(entry["message"]) });
      if (isJson(entry["systemMessage"])) return JSON.stringify({ ...entry, systemMessage: systemMessageShape(entry["systemMessage"]) });
      return line;
    });
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
      // A summary's wording is each agent's own (their prompts and preambles differ).
      .replace(/^(\{"type":"(?:compaction|branch_summary)",.*?"summary":)"(?:[^"\\]|\\.)*"/, '$1"SUMMARY"')
      // Timing: where a duration is recorded is compared, not how long it took.
      .replace(/"durationMs":\d+/g, '"durationMs":"D"'),
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
  return normalised(fileLines(file), p.cwd);
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
  return [original, fork, clone].map((file) => parent(normalised(fileLines(file), p.cwd)));
}

describe("the session file parley writes", () => {
  it(
    "fork and clone write pi's files: the copied path, the parent session, then the new entries (pi 1.6.0 and parley alike)",
    async () => {
      const pi = await forkedFiles(PI_NEWEST_CLI);
      const parley = await forkedFiles(PARLEY_BIN);
      expect(parley).toEqual(pi);
      expect(pi[1]?.[0]).toContain('"parentSession":"ORIGINAL"');
      expect(pi[2]?.[0]).toContain('"parentSession":"FORK"');
    },
    5 * MINUTE,
  );

  it(
    "is pi's, line for line: entries, order and keys (pi 1.6.0 and parley alike)",
    async () => {
      const pi = await conversation(PI_NEWEST_CLI);
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
