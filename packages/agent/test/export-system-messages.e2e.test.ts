/**
 * export_html shows the system messages as pi 1.6's export does, checked through the spawned CLIs
 * side by side (pi 1.6.0, the `pi-newest` devDependency, and parley, each in RPC mode in its own
 * temp HOME, on the scripted model of fixtures/pi16-drifts.ts). pi's page renders in the browser
 * from the session data it embeds; parley's is rendered HTML of its own. Compared is the
 * information: the first system message as the whole prompt with the tools declared, a later one
 * as the sections and tools it changes (pi's summary: "tools, rules, tools -write"); and for a
 * session that records none, the exporting agent's current tools (its prompt, replayed from that
 * transcript, is empty on both).
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type AgentWorld, agentWorld, CLI } from "./helpers/offline-agents.js";
import { closedAfterEach, MINUTE, NO_KEYS } from "./helpers/pi-home.js";
import { type AgentProcess, type Rec, ROOT, spawnAgent } from "./helpers/spawn.js";

const PI_NEWEST = join(ROOT, "node_modules/pi-newest/dist/cli.js");
const FIXTURE = join(ROOT, "packages/agent/test/fixtures/pi16-drifts.ts");
const MODEL = ["--provider", "drifts", "--model", "scripted"];

const running = closedAfterEach();
const worlds: AgentWorld[] = [];
afterAll(() => {
  for (const w of worlds) rmSync(w.base, { recursive: true, force: true });
});

const DROP = `export default function (pi) {
  pi.registerCommand("drop", {
    description: "drop a tool",
    handler: async (args, ctx) => {
      pi.setActiveTools(pi.getActiveTools().filter((name) => name !== args.trim()));
      ctx.ui.notify("dropped " + args.trim(), "info");
    },
  });
}
`;

function start(agent: "pi" | "parley", args: string[] = []): { p: AgentProcess; w: AgentWorld } {
  const w = agentWorld(`parley-export-sys-${agent}-`);
  worlds.push(w);
  writeFileSync(join(w.cwd, "drop.js"), DROP);
  const p = spawnAgent(
    process.execPath,
    [agent === "pi" ? PI_NEWEST : CLI.parley, "--mode", "rpc", "-ne", "-e", FIXTURE, "-e", join(w.cwd, "drop.js"), ...MODEL, ...args],
    { cwd: w.cwd, env: { ...NO_KEYS, ...w.env, PI_OFFLINE: "1", NO_COLOR: "1" }, checkSchema: agent === "parley" },
  );
  running.push(p);
  return { p, w };
}

const data = (r: Rec): Record<string, unknown> => (r["data"] ?? {}) as Record<string, unknown>;

async function prompted(p: AgentProcess, message: string): Promise<void> {
  const from = p.records.length;
  expect((await p.request({ type: "prompt", message }, MINUTE))["success"]).toBe(true);
  await p.waitFor((r) => r.type === "agent_end", MINUTE, from);
}

async function dropped(p: AgentProcess, tool: string): Promise<void> {
  const from = p.records.length;
  expect((await p.request({ type: "prompt", message: `/drop ${tool}` }, MINUTE))["success"]).toBe(true);
  await p.waitFor((r) => r.type === "extension_ui_request" && r["message"] === `dropped ${tool}`, MINUTE, from);
}

async function exported(p: AgentProcess, w: AgentWorld): Promise<string> {
  const response = await p.request({ type: "export_html", outputPath: "page.html" }, MINUTE);
  expect(response["success"], JSON.stringify(response)).toBe(true);
  return readFileSync(join(w.cwd, "page.html"), "utf8");
}

interface PiSystem {
  sections: Record<string, string | null>;
  toolsAdded?: { name: string }[];
  toolsRemoved?: { name: string }[];
}

/** The session data pi's page embeds (base64 JSON), which its script renders. */
function piPageData(html: string): { entries: { type: string; message?: { role: string } & PiSystem }[]; systemPrompt?: string; tools?: { name: string }[] } {
  const match = /<script id="session-data" type="application\/json">([^<]*)<\/script>/.exec(html);
  expect(match).not.toBeNull();
  return JSON.parse(Buffer.from(match?.[1] ?? "", "base64").toString("utf8"));
}

/** pi's page's summary of a later system message: its sections ("-name" when removed), then "tools +a -b". */
function piChanges(message: PiSystem): string {
  const tools = [...(message.toolsAdded ?? []).map((t) => `+${t.name}`), ...(message.toolsRemoved ?? []).map((t) => `-${t.name}`)];
  return [
    ...Object.entries(message.sections ?? {}).map(([name, value]) => (value === null ? `-${name}` : name)),
    ...(tools.length > 0 ? [`tools ${tools.join(" ")}`] : []),
  ].join(", ");
}

const escape = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

describe("export_html shows the system messages, as pi 1.6's export does", () => {
  it("the first as the whole prompt and its tools, a later one as what it changes", async () => {
    const [pi, parley] = await Promise.all(
      (["pi", "parley"] as const).map(async (agent) => {
        const { p, w } = start(agent);
        await prompted(p, "Reply with just: one");
        await dropped(p, "write");
        await prompted(p, "Reply with just: two");
        const messages = data(await p.request({ type: "get_messages" }, MINUTE))["messages"] as ({ role: string } & PiSystem)[];
        return { html: await exported(p, w), system: messages.filter((m) => m.role === "system") };
      }),
    );
    const piSystems = piPageData(pi!.html).entries.flatMap((e) => (e.type === "message" && e.message?.role === "system" ? [e.message] : []));
    expect(piSystems).toHaveLength(2);
    const page = parley!.html;
    // As many system blocks as pi's page has system entries.
    expect(page.match(/class="msg system"/g)).toHaveLength(piSystems.length);
    // The first: the whole prompt (each of parley's sections, in order) and every tool pi declares.
    expect(page).toContain("<h2>System prompt ");
    const sections = Object.values(parley!.system[0]?.sections ?? {}).filter((text): text is string => text !== null);
    expect(page).toContain(escape(sections.join("\n\n")));
    for (const tool of piSystems[0]?.toolsAdded ?? []) expect(page).toContain(`<code>${tool.name}</code> — `);
    // The later one: pi's summary of its changes, each changed section's new text, the tool removed.
    const changes = piChanges(piSystems[1] as PiSystem);
    expect(changes).toBe("tools, rules, tools -write");
    expect(page).toContain(`<h2>System prompt update · ${changes} `);
    for (const text of Object.values(parley!.system[1]?.sections ?? {})) expect(page).toContain(escape(String(text)));
    expect(page).toMatch(/<h3>Tools removed<\/h3><ul><li><code>write<\/code><\/li><\/ul>/);
  });

  it("a session that records none shows the exporting agent's tools", async () => {
    const [pi, parley] = await Promise.all(
      (["pi", "parley"] as const).map(async (agent) => {
        const at = "2026-01-01T00:00:00.000Z";
        const w0 = agentWorld(`parley-export-old-${agent}-`);
        worlds.push(w0);
        const file = join(w0.base, "old.jsonl");
        const lines = [
          { type: "session", version: 3, id: "0a1b2c3d-0000-4000-8000-000000000002", timestamp: at, cwd: w0.base },
          { type: "message", id: "a1", parentId: null, timestamp: at, message: { role: "user", content: [{ type: "text", text: "earlier" }], timestamp: 1 } },
        ];
        writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
        const { p, w } = start(agent, ["--session", file]);
        return exported(p, w);
      }),
    );
    // pi's prompt is the one its transcript records: none. Its tools are the agent's.
    const piData = piPageData(pi!);
    expect(piData.systemPrompt ?? "").toBe("");
    expect(piData.tools?.length).toBeGreaterThan(0);
    expect(parley).toContain("Tools (the exporting agent&#39;s; this session records no system prompt)");
    expect(parley).not.toContain("<summary>Prompt</summary>");
    for (const tool of piData.tools ?? []) expect(parley).toContain(`<code>${tool.name}</code> — `);
  });
});
