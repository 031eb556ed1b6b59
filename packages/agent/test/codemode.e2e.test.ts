/**
 * `builtin:codemode` side by side with pi 1.6.0 (the `pi-newest` devDependency, on the same Node):
 * both CLIs in RPC mode, each in its own temp HOME, on the scripted model of
 * fixtures/codemode/codemode-model.ts, with the MCP probe server (fixtures/mcp/probe-server.mjs)
 * configured with its default `codemode` exposure. Checked: which tools are declared and how
 * (`--tools +codemode`, settings' `codemode.mode: "only"`), a script calling read, bash and MCP
 * tools (the nested `tool_execution_*` records, the result, the tool result message), a syntax
 * error and a bad options line, and an abort in the middle of a script (a nested command and a
 * busy loop), which ends the run.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { agentWorld, CLI, type AgentWorld } from "./helpers/offline-agents.js";
import { closedAfterEach, MINUTE } from "./helpers/pi-home.js";
import { type AgentProcess, type Rec, ROOT, spawnAgent } from "./helpers/spawn.js";

const PI_NEWEST = join(ROOT, "node_modules/pi-newest/dist/cli.js");
const MODEL = join(ROOT, "packages/agent/test/fixtures/codemode/codemode-model.ts");
const SERVER = join(ROOT, "packages/agent/test/fixtures/mcp/probe-server.mjs");
const AGENTS = { pi: PI_NEWEST, parley: CLI.parley } as const;
type Agent = keyof typeof AGENTS;
const BOTH: Agent[] = ["pi", "parley"];

const running = closedAfterEach();
const worlds: AgentWorld[] = [];
afterAll(() => {
  for (const w of worlds) rmSync(w.base, { recursive: true, force: true });
});

function world(agent: Agent, settings: Record<string, unknown> = {}): AgentWorld {
  const w = agentWorld(`parley-codemode-${agent}-`);
  worlds.push(w);
  mkdirSync(w.agentDir, { recursive: true });
  writeFileSync(join(w.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { calc: { command: process.execPath, args: [SERVER] } } }));
  writeFileSync(join(w.agentDir, "settings.json"), JSON.stringify(settings));
  writeFileSync(join(w.cwd, "a.txt"), "hello file\n");
  return w;
}

function start(agent: Agent, w: AgentWorld, args: string[] = ["--tools", "+codemode"]): AgentProcess {
  const p = spawnAgent(process.execPath, [AGENTS[agent], "--mode", "rpc", "--no-session", "-e", MODEL, "--provider", "cm", "--model", "m1", ...args], {
    cwd: w.cwd,
    env: { ...w.env, PI_OFFLINE: "1", NO_COLOR: "1" },
    checkSchema: agent === "parley",
  });
  running.push(p);
  return p;
}

/** Sends a prompt and waits for its run to end; returns the records of the run. */
async function prompted(agent: AgentProcess, message: string): Promise<Rec[]> {
  const from = agent.records.length;
  const response = await agent.request({ type: "prompt", message }, MINUTE);
  expect(response["success"], JSON.stringify(response)).toBe(true);
  await agent.waitFor((r) => r.type === "agent_end", MINUTE, from);
  return agent.records.slice(from);
}

const lastText = (records: Rec[]): string => {
  const ends = records.filter((r) => r.type === "message_end" && (r["message"] as Rec)["role"] === "assistant");
  const content = ((ends.at(-1)?.["message"] as Rec | undefined)?.["content"] ?? []) as Rec[];
  return content.flatMap((c) => (c["type"] === "text" ? [String(c["text"])] : [])).join("");
};

interface Declared {
  name: string;
  description: string;
  parameters: unknown;
}

/** The declared tools as compared: names, parameters, what codemode lists, what a script's call of each resolves to. */
function declarations(tools: Declared[]) {
  return tools.map((tool) => ({
    name: tool.name,
    parameters: tool.name === "codemode" ? tool.parameters : undefined,
    resolvesTo: /`tools\.\w+\(args\)` resolves to (.*)\.$/s.exec(tool.description)?.[1],
    listed: tool.name === "codemode" ? [...tool.description.matchAll(/^#{2,3} `?([^`\n(]+)`?/gm)].map((m) => m[1]?.trim()) : undefined,
  }));
}

/** Wall times, durations and timestamps vary between runs; the temp folders between worlds. */
function normalize(value: unknown, w: AgentWorld): unknown {
  const text = JSON.stringify(value)
    .split(w.base)
    .join("<BASE>")
    .replace(/Wall time \d+\.\d seconds/g, "Wall time <T> seconds")
    .replace(/"wall_time_seconds":[\d.]+/g, '"wall_time_seconds":0')
    // Where an image is saved (parley keeps its output files in a private folder of its own).
    .replace(/\[Image saved to [^\]]*?\/pi-codemode-[0-9a-z]+\.(png|jpg|gif|webp) /g, "[Image saved to <FILE> ")
    // pi's model-call errors end pointing at its own docs/codemode.md, which parley does not ship.
    .replace(/ See \\"[A-Za-z ]+\\" in [^\s"]*codemode\.md\./g, "");
  return JSON.parse(text, (key, v) => (key === "durationMs" || key === "timestamp" ? 0 : v));
}

/** The tool records of a run (nested ones included), and the tool result messages. */
function toolRecords(records: Rec[], w: AgentWorld): unknown[] {
  return records
    .filter(
      (r) =>
        r.type === "tool_execution_start" || r.type === "tool_execution_end" || (r.type === "message_end" && (r["message"] as Rec)["role"] === "toolResult"),
    )
    .map((r) => normalize(r, w));
}

describe("builtin:codemode declared as pi 1.6 declares it", () => {
  it(
    "--tools +codemode adds it beside the defaults; each declared tool says what a script's call resolves to; MCP tools stay unlisted",
    async () => {
      const seen = await Promise.all(
        BOTH.map(async (agent) => {
          const p = start(agent, world(agent));
          return declarations(JSON.parse(lastText(await prompted(p, "show tools"))) as Declared[]);
        }),
      );
      const [pi, parley] = seen;
      expect(parley).toEqual(pi);
      expect(pi?.map((t) => t.name)).toEqual(["read", "bash", "edit", "write", "codemode"]);
      expect(pi?.find((t) => t.name === "bash")?.resolvesTo).toBe("`{ output, truncated, full_output_path?, exit_code, wall_time_seconds }`");
    },
    3 * MINUTE,
  );

  it(
    'codemode.mode "only" hides the direct tools from the model and lists them in codemode instead',
    async () => {
      const seen = await Promise.all(
        BOTH.map(async (agent) => {
          const p = start(agent, world(agent, { codemode: { mode: "only" } }));
          return declarations(JSON.parse(lastText(await prompted(p, "show tools"))) as Declared[]);
        }),
      );
      const [pi, parley] = seen;
      expect(parley).toEqual(pi);
      expect(pi?.map((t) => t.name)).toEqual(["codemode"]);
      expect(pi?.[0]?.listed).toEqual(["read", "bash", "edit", "write"]);
    },
    3 * MINUTE,
  );

  it(
    "without --tools +codemode it is offered only when an MCP server's tools need it; -ne leaves it out, -e builtin:codemode brings it back",
    async () => {
      const cases: { args: string[]; mcp: boolean; offered: boolean }[] = [
        { args: [], mcp: false, offered: false },
        { args: [], mcp: true, offered: true },
        { args: ["-ne", "--tools", "+codemode"], mcp: false, offered: false },
        { args: ["-ne", "-e", "builtin:codemode", "--tools", "+codemode"], mcp: false, offered: true },
      ];
      for (const { args, mcp, offered } of cases) {
        const names = await Promise.all(
          BOTH.map(async (agent) => {
            const w = world(agent);
            if (!mcp) rmSync(join(w.agentDir, "mcp.json"));
            const p = start(agent, w, args);
            return (JSON.parse(lastText(await prompted(p, "show tools"))) as Declared[]).map((t) => t.name);
          }),
        );
        expect(names[1], args.join(" ")).toEqual(names[0]);
        expect(names[0]?.includes("codemode"), args.join(" ")).toBe(offered);
      }
    },
    3 * MINUTE,
  );
});

const SCRIPT = `codemode:
const a = await tools.read({ path: "a.txt" });
const b = await tools.bash({ command: "echo hi; exit 3" });
const sum = await tools.mcp__calc__add({ a: 2, b: 3 });
const broken = await tools.mcp__calc__broken({});
const missing = await tools.read({ offset: 2 }).catch((e) => "rejected: " + e.message);
text(a);
console.log(b.exit_code, JSON.stringify(b.output));
console.log(JSON.stringify(sum), JSON.stringify(broken));
text(missing);
const ns = await describeNamespace("calc");
return { namespace: ns.name, tools: ns.tools.length > 0 };`;

describe("a codemode script, as pi 1.6 runs it", () => {
  it(
    "calls read, bash and MCP tools: the same nested records, result and tool result message",
    async () => {
      const runs = await Promise.all(
        BOTH.map(async (agent) => {
          const w = world(agent);
          const p = start(agent, w);
          const records = await prompted(p, SCRIPT);
          return { records: toolRecords(records, w), reply: normalize(lastText(records), w) };
        }),
      );
      const [pi, parley] = runs;
      expect(parley?.reply).toEqual(pi?.reply);
      expect(parley?.records).toEqual(pi?.records);
      expect(pi?.reply).toContain("Script completed");
      expect(pi?.reply).toContain('3 "hi\\n"');
      expect(pi?.reply).toContain("rejected: ");
    },
    3 * MINUTE,
  );

  it(
    "a syntax error and a bad options line fail the call as in pi",
    async () => {
      for (const script of ["codemode:\nconst x = ;", 'codemode:\n// @options: {"nope": 1}\ntext(1);', "codemode:\ntext(1);\n// @options: {}"]) {
        const runs = await Promise.all(
          BOTH.map(async (agent) => {
            const w = world(agent);
            const records = await prompted(start(agent, w), script);
            return toolRecords(records, w);
          }),
        );
        expect(runs[1], script).toEqual(runs[0]);
        expect(JSON.stringify(runs[0])).toContain('"isError":true');
      }
    },
    3 * MINUTE,
  );

  it(
    "an abort in the middle of a script (a nested command, a busy loop) ends the run as in pi",
    async () => {
      const scripts = {
        nested: 'codemode:\ntext("before");\nawait tools.bash({ command: "sleep 3600" });\ntext("after");',
        busy: 'codemode:\ntext("before");\nconst r = await tools.read({ path: "a.txt" });\nwhile (true) {}',
      };
      for (const [label, script] of Object.entries(scripts)) {
        const runs = await Promise.all(
          BOTH.map(async (agent) => {
            const w = world(agent);
            const p = start(agent, w);
            const from = p.records.length;
            const response = await p.request({ type: "prompt", message: script }, MINUTE);
            expect(response["success"]).toBe(true);
            // Once the nested call is under way (or done, for the busy loop), the run is aborted.
            await p.waitFor((r) => r.type === "tool_execution_start" && r["parentToolCallId"] !== undefined, MINUTE, from);
            if (label === "busy") await p.waitFor((r) => r.type === "tool_execution_end" && r["parentToolCallId"] !== undefined, MINUTE, from);
            await p.request({ type: "abort" }, MINUTE);
            await p.waitFor((r) => r.type === "agent_end", MINUTE, from);
            return toolRecords(p.records.slice(from), w);
          }),
        );
        expect(runs[1], label).toEqual(runs[0]);
        expect(JSON.stringify(runs[0]), label).toContain("Script failed");
      }
    },
    3 * MINUTE,
  );
});

const TYPED = join(ROOT, "packages/agent/test/fixtures/codemode/typed-provider.js");

const MODELS_SCRIPT = `codemode:
const judge = await models.getModelOfType("classifier", "judgeco", "judge");
const question = { ok: { type: "bool", instructions: "Is it fine?", criteria: { true: "yes", false: "no" } } };
const verdict = await models.classify(judge, { state: { text: "fine" }, questions: question });
// A script's own baseUrl never reaches the provider: the call uses the catalogue's entry.
const picture = await models.generateImages({ provider: "judgeco", id: "painter", baseUrl: "http://elsewhere.invalid" }, { input: [{ type: "text", text: "a fox" }] });
image(picture.output[0]);
return {
  available: (await models.getAvailableOfType("classifier", "judgeco")).map((m) => m.id),
  images: (await models.getModelsOfType("image", "judgeco")).map((m) => m.id),
  chat: (await models.getModelsOfType("chat", "cm")).map((m) => m.id),
  verdict: [verdict.stopReason, verdict.answers, verdict.errorMessage],
  picture: [picture.stopReason, picture.errorMessage],
};`;

describe("a codemode script's models global, as pi 1.6 offers it", () => {
  const run = async (script: string, extra: string[] = []) =>
    Promise.all(
      BOTH.map(async (agent) => {
        const w = world(agent);
        rmSync(join(w.agentDir, "mcp.json"));
        const records = await prompted(start(agent, w, ["--tools", "+codemode", "-e", TYPED, ...extra]), script);
        return { records: toolRecords(records, w), reply: normalize(lastText(records), w) };
      }),
    );

  it(
    "lists the catalogue and runs an extension's classifier and image model with the provider's key: the same rows, usage and result",
    async () => {
      const [pi, parley] = await run(MODELS_SCRIPT);
      expect(parley?.records).toEqual(pi?.records);
      expect(parley?.reply).toEqual(pi?.reply);
      const text = String(pi?.reply);
      expect(text).toContain("Script completed");
      expect(text).toContain('"available":["judge"]');
      expect(text).toContain("key=jk-literal base=http://127.0.0.1:9/judgeco prompt=a fox");
      const end = pi?.records.find((r) => (r as Rec)["type"] === "tool_execution_end" && (r as Rec)["toolName"] === "codemode") as Rec | undefined;
      expect(JSON.stringify(end)).toContain('"name":"models.classify"');
      expect(JSON.stringify(end)).toContain('"cost":0.5');
    },
    3 * MINUTE,
  );

  it(
    "a model of the wrong type, an unknown one, a malformed context and an unshown image: the same errors and note as pi",
    async () => {
      const scripts = [
        'codemode:\nawait models.classify({ provider: "judgeco", id: "painter" }, { state: {}, questions: {} });',
        'codemode:\nawait models.generateImages(await models.getModelOfType("image", "judgeco", "nope"), { input: [] });',
        'codemode:\nawait models.classify({ provider: "judgeco", id: "judge" }, { state: {}, questions: { q: { type: "maybe", instructions: "x" } } });',
        'codemode:\nawait models.getModelOfType("classifier", "judgeco/judge");',
        'codemode:\nconst p = await models.generateImages({ provider: "judgeco", id: "painter" }, { input: [{ type: "text", text: "x" }] });\nreturn p.stopReason;',
      ];
      for (const script of scripts) {
        const [pi, parley] = await run(script);
        expect(parley?.records, script).toEqual(pi?.records);
      }
    },
    5 * MINUTE,
  );
});
