/**
 * The system message pi 1.6 records in the transcript (the prompt's sections and the tool
 * declarations, `role: "system"`), checked through the spawned CLIs side by side: pi 1.6.0 (the
 * `pi-newest` devDependency) and parley, each in RPC mode in its own temp HOME, on the scripted
 * model of fixtures/pi16-drifts.ts. Compared: get_messages, the session file's entries and
 * get_session_stats after prompts, for a new session, after the tool set (and so the prompt)
 * changed between prompts, around a compaction (its entry's `systemMessage` snapshot), and for a
 * resumed pi 0.73 one (no system message in its file).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { data, DRIFTS_MODEL, driftSides } from "./helpers/drift-sides.js";
import { SIDES as BOTH, type Side } from "./helpers/newest-pi.js";
import type { AgentWorld } from "./helpers/offline-agents.js";
import { MINUTE, prompted } from "./helpers/pi-home.js";
import type { AgentProcess } from "./helpers/spawn.js";

const sides = driftSides("parley-sysmsg-");
const { world } = sides;

/** An extension whose /drop-write takes the write tool out of the active set (the prompt's tool list and the declarations change). */
const DROP_WRITE = `export default function (pi) {
  pi.registerCommand("drop-write", {
    description: "drop the write tool",
    handler: async (_args, ctx) => {
      pi.setActiveTools(pi.getActiveTools().filter((name) => name !== "write"));
      ctx.ui.notify("dropped", "info");
    },
  });
}
`;

/** A side with no extensions discovered, on the scripted model. */
const start = (agent: Side, w: AgentWorld, args: string[]): AgentProcess => sides.start(agent, w, ["-ne", ...DRIFTS_MODEL, ...args]);

/** A message as compared: its role; for a system message, what it records (the sections' names, not the prompt's wording, which is each agent's own). */
function shape(message: Record<string, unknown>): unknown {
  if (message["role"] !== "system") return message["role"];
  const sections = message["sections"];
  const added = message["toolsAdded"];
  return {
    role: "system",
    content: message["content"],
    // The names of the sections it sets, in order ("-name" for one it removes).
    sections:
      typeof sections === "object" && sections !== null ? Object.entries(sections).map(([name, text]) => (text === null ? `-${name}` : name)) : sections,
    toolsAdded: Array.isArray(added) ? added.map((t: Record<string, unknown>) => [t["name"], typeof t["description"], typeof t["parameters"]]).sort() : added,
    toolsRemoved: message["toolsRemoved"],
    timestamp: typeof message["timestamp"],
  };
}

/** What get_messages, the session file and get_session_stats say. */
async function observed(p: AgentProcess): Promise<unknown> {
  const messages = data(await p.request({ type: "get_messages" }, MINUTE))["messages"] as Record<string, unknown>[];
  const file = String(data(await p.request({ type: "get_state" }, MINUTE))["sessionFile"]);
  const entries = readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((e) => e["type"] === "message")
    .map((e) => shape(e["message"] as Record<string, unknown>));
  const stats = data(await p.request({ type: "get_session_stats" }, MINUTE));
  const counts = { user: stats["userMessages"], assistant: stats["assistantMessages"], toolResults: stats["toolResults"], total: stats["totalMessages"] };
  return { messages: messages.map(shape), entries, counts };
}

describe("system messages as pi 1.6 records them", () => {
  it("the first prompt records one system message (prompt sections + tool declarations) before the user message; a second prompt with nothing changed records none", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const p = start(agent, world(agent), []);
        await prompted(p, "Reply with just: one");
        const first = await observed(p);
        await prompted(p, "Reply with just: two");
        return { first, second: await observed(p) };
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    const system = (seen[1] as { first: { messages: unknown[] } }).first.messages[0];
    expect(system).toMatchObject({ role: "system", content: "", sections: ["preamble", "tools", "rules", "docs", "cwd"], timestamp: "number" });
    expect((seen[1] as { second: { counts: unknown } }).second.counts).toEqual({ user: 2, assistant: 2, toolResults: 0, total: 5 });
  });

  it("a prompt after the tool set changed records a system message that patches the prompt and removes the tool; the stats count it", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const w = world(agent);
        const extension = join(w.cwd, "drop-write.js");
        writeFileSync(extension, DROP_WRITE);
        const p = start(agent, w, ["-e", extension]);
        await prompted(p, "Reply with just: one");
        const from = p.records.length;
        expect((await p.request({ type: "prompt", message: "/drop-write" }, MINUTE))["success"]).toBe(true);
        await p.waitFor((r) => r.type === "extension_ui_request" && r["message"] === "dropped", MINUTE, from);
        await prompted(p, "Reply with just: two");
        return observed(p);
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    const { messages, counts } = seen[1] as { messages: unknown[]; counts: unknown };
    expect(messages.map((m) => (typeof m === "string" ? m : "system"))).toEqual(["system", "user", "assistant", "system", "user", "assistant"]);
    // The second one: the prompt's changed sections and the tool taken away, nothing added.
    expect(messages[3]).toMatchObject({ role: "system", content: "", sections: ["tools", "rules"], toolsRemoved: [{ name: "write" }] });
    expect(counts).toEqual({ user: 2, assistant: 2, toolResults: 0, total: 6 });
  });

  it("a compaction snapshots the recorded prompt and tools in its entry, its context starts with that snapshot, and the next prompt records none", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const w = world(agent);
        // A small budget, so that the compaction cuts inside the conversation (at its last exchange).
        writeFileSync(join(w.agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 1 } }));
        const p = start(agent, w, []);
        await prompted(p, "Reply with just: one");
        await prompted(p, "Reply with just: two");
        const compacted = await p.request({ type: "compact" }, MINUTE);
        expect(compacted["success"], JSON.stringify(compacted)).toBe(true);
        const afterCompaction = await observed(p);
        await prompted(p, "Reply with just: three");
        const file = String(data(await p.request({ type: "get_state" }, MINUTE))["sessionFile"]);
        const compactions = readFileSync(file, "utf8")
          .split("\n")
          .filter((line) => line.length > 0)
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .filter((e) => e["type"] === "compaction")
          .map((e) => ({ systemMessage: shape(e["systemMessage"] as Record<string, unknown>) }));
        return { afterCompaction, compactions, last: await observed(p) };
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    const { afterCompaction, compactions, last } = seen[1] as {
      afterCompaction: { messages: unknown[] };
      compactions: { systemMessage: unknown }[];
      last: { messages: unknown[]; entries: unknown[] };
    };
    // The snapshot: the prompt's sections and every tool, in one system message.
    expect(compactions).toHaveLength(1);
    expect(compactions[0]?.systemMessage).toMatchObject({
      role: "system",
      sections: ["preamble", "tools", "rules", "docs", "cwd"],
      toolsAdded: expect.any(Array),
    });
    expect(afterCompaction.messages.slice(0, 2)).toEqual([compactions[0]?.systemMessage, "compactionSummary"]);
    // No new system message after the compaction: the file holds only the first prompt's.
    expect(last.entries.filter((e) => typeof e !== "string")).toHaveLength(1);
    expect(last.messages.filter((m) => typeof m !== "string")).toHaveLength(1);
  });

  it("a resumed pi 0.73 session (no system message in its file) gets one at its next prompt, after the old messages", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const w = world(agent);
        const file = join(w.cwd, "old.jsonl");
        const at = "2026-01-01T00:00:00.000Z";
        const lines = [
          { type: "session", version: 3, id: "0a1b2c3d-0000-4000-8000-000000000001", timestamp: at, cwd: w.cwd },
          { type: "message", id: "a1", parentId: null, timestamp: at, message: { role: "user", content: [{ type: "text", text: "earlier" }], timestamp: 1 } },
          {
            type: "message",
            id: "a2",
            parentId: "a1",
            timestamp: at,
            message: {
              role: "assistant",
              content: [{ type: "text", text: "ok" }],
              api: "drifts-faux",
              provider: "drifts",
              model: "scripted",
              usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
              stopReason: "stop",
              timestamp: 2,
            },
          },
        ];
        writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
        const p = start(agent, w, ["--session", file]);
        const before = await observed(p);
        await prompted(p, "Reply with just: again");
        return { before, after: await observed(p) };
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    const after = (seen[1] as { after: { messages: unknown[] } }).after.messages;
    expect(after.map((m) => (typeof m === "string" ? m : "system"))).toEqual(["user", "assistant", "system", "user", "assistant"]);
  });
});
