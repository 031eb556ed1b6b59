/**
 * pi's own example extensions, loaded unmodified from the reference package.
 */
import { readdirSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkedAgents } from "./helpers/checked-agents.js";
import { OFFLINE_PROVIDER } from "./helpers/offline-agents.js";
import { PI_EXAMPLES, ROOT, openDialog, spawnParley, spawnPiNewest, type AgentProcess } from "./helpers/spawn.js";

/** Agent directories the tests made, removed at the end. */
const tempDirs: string[] = [];
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

// Folders whose extension needs packages of its own (they ship a package.json for `npm install`).
const NEEDS_OWN_INSTALL = new Set(["sandbox", "with-deps", "custom-provider-anthropic", "custom-provider-gitlab-duo", "gondolin"]);

/** The example extensions of a folder: each `.ts` file, and each folder's `index.ts` that needs no install of its own. */
const examplesIn = (folder: string): string[] => [
  ...readdirSync(folder)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(folder, f)),
  ...readdirSync(folder, { withFileTypes: true })
    .filter((d) => d.isDirectory() && !NEEDS_OWN_INSTALL.has(d.name) && existsSync(join(folder, d.name, "index.ts")))
    .map((d) => join(folder, d.name, "index.ts")),
];

const ALL = examplesIn(PI_EXAMPLES);
// The newest pi's examples (pi 1.6.0), by the same rule.
const NEWEST_EXAMPLES = join(ROOT, "node_modules/pi-newest/examples/extensions");
const NEWEST = examplesIn(NEWEST_EXAMPLES);

const agents = checkedAgents();
const start = (files: string[]) => {
  const agent = spawnParley(files.flatMap((f) => ["-e", f]));
  agents.push(agent);
  return agent;
};
const ex = (name: string) => join(PI_EXAMPLES, name);
const notes = (agent: AgentProcess) => agent.records.filter((r) => r["method"] === "notify").map((r) => r["message"]);

describe("pi's example extensions run unmodified", () => {
  it(`all ${ALL.length} examples load together and start without an extension error`, async () => {
    expect(ALL.length).toBeGreaterThan(60);
    const agent = start(ALL);
    const state = await agent.request({ type: "get_state" }, 60_000);
    expect(state["success"]).toBe(true);
    // file-trigger watches a fixed /tmp path that does not exist here: reported, not fatal (pi does the same).
    expect(agent.records.filter((r) => r.type === "extension_error")).toEqual(
      existsSync("/tmp/agent-trigger.txt")
        ? []
        : [
            {
              type: "extension_error",
              extensionPath: ex("file-trigger.ts"),
              event: "session_start",
              error: "ENOENT: no such file or directory, watch '/tmp/agent-trigger.txt'",
            },
          ],
    );
    const commands = ((await agent.request({ type: "get_commands" }))["data"] as { commands: { name: string }[] }).commands;
    expect(commands.map((c) => c.name)).toEqual(expect.arrayContaining(["rpc-input", "timed", "session-name", "commands", "pirate", "emit"]));
  });

  it(`the newest pi's ${NEWEST.length} examples load together too, its virtual model among the models`, async () => {
    expect(NEWEST.length).toBeGreaterThan(60);
    const agent = start(NEWEST);
    expect((await agent.request({ type: "get_state" }, 60_000))["success"]).toBe(true);
    const errors = agent.records.filter((r) => r.type === "extension_error").map((r) => `${String(r["extensionPath"])}: ${String(r["error"])}`);
    expect(errors).toEqual(
      existsSync("/tmp/agent-trigger.txt")
        ? []
        : [`${join(NEWEST_EXAMPLES, "file-trigger.ts")}: ENOENT: no such file or directory, watch '/tmp/agent-trigger.txt'`],
    );
    const models = ((await agent.request({ type: "get_available_models" }))["data"] as { models: { provider: string; id: string; api: string }[] }).models;
    expect(models).toContainEqual(expect.objectContaining({ provider: "jev", id: "auto", api: "pi-virtual" }));
  });

  it("rpc-demo: input, editor, prefill, and the confirm on new_session", async () => {
    const agent = start([ex("rpc-demo.ts")]);
    const input = await openDialog(agent, "/rpc-input", "input");
    expect(input).toMatchObject({ title: "Enter a value", placeholder: "type something..." });
    agent.send({ type: "extension_ui_response", id: input["id"], value: "42" });
    await agent.waitFor((r) => r["message"] === "You entered: 42");
    const editor = await openDialog(agent, "/rpc-editor", "editor");
    agent.send({ type: "extension_ui_response", id: editor["id"], value: "a\nb" });
    await agent.waitFor((r) => r["message"] === "Editor submitted (2 lines)");
    await agent.request({ type: "prompt", message: "/rpc-prefill" });
    expect(agent.records.find((r) => r["method"] === "set_editor_text")?.["text"]).toBe("This text was set by the rpc-demo extension.");

    agent.send({ type: "new_session", id: "ns" });
    const confirm = await agent.waitFor((r) => r["method"] === "confirm");
    expect(confirm).toMatchObject({ title: "Clear session?", message: "All messages will be lost." });
    agent.send({ type: "extension_ui_response", id: confirm["id"], confirmed: false });
    expect((await agent.response("ns"))["data"]).toEqual({ cancelled: true });
    expect(notes(agent)).toContain("Clear cancelled");
  });

  it("timed-confirm: the timeout resolves the dialog and the extension sees it", async () => {
    const agent = start([ex("timed-confirm.ts")]);
    const select = await openDialog(agent, "/timed-select", "select");
    expect(select).toMatchObject({ options: ["Option A", "Option B", "Option C"], timeout: 10000 });
    agent.send({ type: "extension_ui_response", id: select["id"], value: "Option B" });
    await agent.waitFor((r) => r["message"] === "Selected: Option B");
    const signal = await openDialog(agent, "/timed-signal", "confirm");
    agent.send({ type: "extension_ui_response", id: signal["id"], confirmed: true });
    await agent.waitFor((r) => r["message"] === "Confirmed by user!");
  });

  it("widget-placement, session-name, event-bus, pirate, commands", async () => {
    const agent = start([ex("widget-placement.ts"), ex("session-name.ts"), ex("event-bus.ts"), ex("pirate.ts"), ex("commands.ts")]);
    await agent.request({ type: "get_state" });
    const ui = (await agent.request({ type: "get_ui_state" }))["data"] as { widgets: Record<string, unknown> };
    expect(ui.widgets).toEqual({
      "widget-above": { lines: ["Above editor widget"], placement: "aboveEditor" },
      "widget-below": { lines: ["Below editor widget"], placement: "belowEditor" },
    });
    expect(notes(agent)).toContain("Event from event-bus-example: Session started");
    await agent.request({ type: "prompt", message: "/session-name my work" });
    expect(((await agent.request({ type: "get_state" }))["data"] as { sessionName?: string }).sessionName).toBe("my work");
    expect(agent.records.some((r) => r.type === "session_info_changed" && r["name"] === "my work")).toBe(true);
    await agent.request({ type: "prompt", message: "/emit ahoy" });
    await agent.request({ type: "prompt", message: "/pirate" });
    expect(notes(agent)).toEqual(expect.arrayContaining(["Session named: my work", "Event from /emit command: ahoy", "Arrr! Pirate mode enabled!"]));
    const select = await openDialog(agent, "/commands extension", "select");
    expect(select["options"]).toEqual(
      expect.arrayContaining(["--- Extensions ---", "/session-name - Set or show session name (usage: /session-name [new name])"]),
    );
    agent.send({ type: "extension_ui_response", id: select["id"], cancelled: true });
  });

  it("custom-compaction: its handler asks ctx.modelRegistry for request auth and falls back as it does in pi", async () => {
    // Both agents on the same offline model and pi 1.6.0's example; no Gemini key, so its summary call gets nothing and it falls back on pi's default compaction.
    const run = async (spawn: typeof spawnParley) => {
      // A compaction budget of one token: pi 1.6 (and parley) refuse to compact a session that fits keepRecentTokens.
      const agentDir = mkdtempSync(join(tmpdir(), "parley-examples-agent-"));
      tempDirs.push(agentDir);
      writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 1 } }));
      const agent = spawn(["-e", OFFLINE_PROVIDER, "-e", join(NEWEST_EXAMPLES, "custom-compaction.ts"), "--provider", "offline", "--model", "echo"], {
        env: { GEMINI_API_KEY: undefined, GOOGLE_API_KEY: undefined, PI_CODING_AGENT_DIR: agentDir },
      });
      agents.push(agent);
      await agent.request({ type: "prompt", message: "Reply with just: hello" });
      await agent.waitFor((r) => r.type === "agent_end");
      const compacted = await agent.request({ type: "compact" });
      return {
        success: compacted["success"],
        summary: (compacted["data"] as { summary?: string } | undefined)?.summary,
        notes: notes(agent),
        errors: agent.records.filter((r) => r.type === "extension_error"),
      };
    };
    const [pi, parley] = await Promise.all([run(spawnPiNewest), run(spawnParley)]);
    // The token count follows each agent's system prompt (their wording differs by design).
    const comparable = (r: typeof pi) => ({ ...r, notes: r.notes.map((n) => String(n).replace(/\(\d[\d,]* tokens\)/, "(N tokens)")) });
    expect(comparable(parley)).toEqual(comparable(pi));
    expect(comparable(parley).notes).toEqual([
      "Custom compaction extension triggered",
      "Custom compaction: summarizing 1 messages (N tokens) with gemini-2.5-flash...",
      "Compaction summary was empty, using default compaction",
    ]);
  });
});
