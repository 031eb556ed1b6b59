/**
 * The newest pi's libraries (@earendil-works/pi-ai with each of its subpaths, pi-tui,
 * pi-agent-core, and pi-coding-agent's root), through the spawned CLI: an extension importing any
 * value export of any of their modules, under either scope, loads in parley and gets a value of the
 * same kind as in pi 1.6.0; the real implementations behave; what it registers reaches parley's
 * own pi-ai instance, never a copy found in node_modules.
 */
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import { libraryModules, packageDir, valueKind } from "../scripts/library-surface.mjs";
import { AGENT_FIXTURES, msg, notes, processRegistry, runPrompt, tempDir, textOf, writeScript } from "./fixtures/agent/harness.js";
import type { AgentProcess, Rec } from "./helpers/spawn.js";

const procs = processRegistry();
const SCOPES = ["@earendil-works", "@mariozechner"];

/** Package-relative specifier ("pi-ai/utils/uuid") → name → kind ("function", "class", "object", "string", …; "defined" when only that is known). */
type Surface = Record<string, Record<string, string>>;

/** pi-ai, pi-tui and pi-agent-core 1.6.0: every module, every value export, with its kind. */
async function librarySurface(): Promise<Surface> {
  const out: Surface = {};
  for (const pkg of ["pi-ai", "pi-tui", "pi-agent-core"]) {
    for (const module of await libraryModules(`@earendil-works/${pkg}`)) {
      const values = await module.load();
      out[pkg + module.subpath.slice(1)] = Object.fromEntries(Object.keys(values).map((name) => [name, valueKind(values[name])]));
    }
  }
  return out;
}

/**
 * pi-coding-agent 1.6.0's root (it needs Node 22, so it cannot be imported here): its export names
 * as esbuild links them, and the kind of those its declarations say are classes or functions.
 */
async function codingAgentSurface(): Promise<Surface> {
  const dir = packageDir("pi-newest");
  const result = await build({
    entryPoints: [join(dir, "dist", "index.js")],
    bundle: true,
    packages: "external",
    format: "esm",
    platform: "node",
    write: false,
    metafile: true,
    outdir: tempDir("parley-pi-newest-"),
    logLevel: "silent",
  });
  const names = Object.values(result.metafile.outputs).flatMap((o) => (o.entryPoint ? o.exports : []));
  const declared = new Map<string, string>();
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder)) {
      const full = join(folder, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (entry.endsWith(".d.ts")) {
        for (const m of readFileSync(full, "utf8").matchAll(/^export declare (?:abstract )?(class|function) (\w+)/gm))
          declared.set(m[2] as string, m[1] as string);
      }
    }
  };
  walk(join(dir, "dist", "core"));
  walk(join(dir, "dist", "modes"));
  return { "pi-coding-agent": Object.fromEntries(names.filter((n) => n !== "default").map((n) => [n, declared.get(n) ?? "defined"])) };
}

/**
 * An extension importing every name of `surface` under both scopes, one named import each, whose
 * /surface command reports each binding that is missing or of another kind.
 */
function surfaceExtension(surface: Surface): string {
  const lines: string[] = [];
  const checks: string[] = [];
  let n = 0;
  for (const scope of SCOPES) {
    for (const [module, names] of Object.entries(surface)) {
      const specifier = `${scope}/${module}`;
      const bindings = Object.keys(names).map((name) => [name, `b${n++}`] as const);
      if (bindings.length === 0) continue;
      lines.push(`import { ${bindings.map(([name, local]) => `${name} as ${local}`).join(", ")} } from ${JSON.stringify(specifier)};`);
      for (const [name, local] of bindings)
        checks.push(`  [${JSON.stringify(specifier)}, ${JSON.stringify(name)}, ${JSON.stringify(names[name])}, () => ${local}],`);
    }
  }
  return [
    ...lines,
    "const kind = (v) =>",
    '  typeof v === "function" ? (/^class\\b/.test(Function.prototype.toString.call(v)) ? "class" : "function") : v !== null && typeof v === "object" ? "object" : typeof v;',
    "const checks = [",
    ...checks,
    "];",
    "export default function (pi) {",
    '  pi.registerCommand("surface", {',
    "    handler: async (_args, ctx) => {",
    "      const wrong = [];",
    "      for (const [specifier, name, expected, read] of checks) {",
    "        const got = kind(read());",
    '        if (expected === "defined" ? got === "undefined" : got !== expected) wrong.push(`${specifier} ${name}: ${expected}, got ${got}`);',
    "      }",
    '      ctx.ui.notify(JSON.stringify({ checked: checks.length, wrong }), "info");',
    "    },",
    "  });",
    "}",
    "",
  ].join("\n");
}

function start(extensions: string[], replies: string[] = ["hi"]): AgentProcess {
  const args = ["--mode", "rpc", "--no-session", "--model-script", writeScript(replies), ...extensions.flatMap((e) => ["-e", e])];
  return procs.raw(args, { cwd: tempDir() });
}

/** The text of a run's last assistant message. */
const replyText = (records: Rec[]): string => {
  const end = [...records].reverse().find((r) => r.type === "message_end" && msg(r).role === "assistant");
  return end === undefined ? "" : textOf(msg(end));
};

const noErrors = (agent: AgentProcess) => expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([]);

describe("the newest pi's library modules", () => {
  let surface: Surface;
  beforeAll(async () => {
    surface = { ...(await librarySurface()), ...(await codingAgentSurface()) };
  }, 120_000);

  it("every value export of every module of pi-ai, pi-tui, pi-agent-core and pi-coding-agent 1.6.0, under both scopes, is a binding of the same kind", async () => {
    const libraries = Object.keys(surface).filter((s) => s !== "pi-coding-agent");
    // The modules pi-ai's wildcard subpaths expand to are there too (providers/*, api/*, utils/*).
    expect(libraries).toEqual(
      expect.arrayContaining(["pi-ai", "pi-ai/compat", "pi-ai/models", "pi-ai/utils/uuid", "pi-ai/providers/anthropic.models", "pi-tui", "pi-agent-core"]),
    );
    expect(libraries.length).toBeGreaterThan(150);
    const file = join(tempDir("parley-surface-"), "surface.js");
    writeFileSync(file, surfaceExtension(surface));
    const agent = start([file]);
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "/surface" }, 120_000);
    const report = JSON.parse(notes(agent, from)[0] as string) as { checked: number; wrong: string[] };
    expect(report.wrong).toEqual([]);
    const names = Object.values(surface).reduce((sum, names) => sum + Object.keys(names).length, 0);
    expect(report.checked).toBe(names * SCOPES.length);
    noErrors(agent);
  });

  it("parley run unbundled from dist/ (as a library) serves the same modules, of the same kinds", async () => {
    const file = join(tempDir("parley-surface-"), "surface.js");
    writeFileSync(file, surfaceExtension(surface));
    const loader = pathToFileURL(join(import.meta.dirname, "..", "dist", "extensions", "loader.js")).href;
    // The extension's /surface handler, run with just what it uses of pi and ctx.
    const script = [
      `const { loadExtension } = await import(${JSON.stringify(loader)});`,
      `const loaded = await loadExtension(${JSON.stringify(file)});`,
      "if (loaded.error) { console.log(JSON.stringify({ error: loaded.error })); process.exit(0); }",
      "let handler;",
      "await loaded.factory({ registerCommand: (_name, options) => { handler = options.handler; } });",
      "await handler('', { ui: { notify: (message) => console.log(message) } });",
    ].join("\n");
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code, err).toBe(0);
    const report = JSON.parse(out) as { checked: number; wrong: string[] };
    expect(report.wrong).toEqual([]);
    expect(report.checked).toBe(Object.values(surface).reduce((sum, names) => sum + Object.keys(names).length, 0) * SCOPES.length);
  }, 180_000);

  it("an import of a path the modules do not export fails to load instead of reaching the newest pi in node_modules", async () => {
    const file = join(tempDir("parley-deep-"), "deep.js");
    writeFileSync(file, 'import { uuidv7 } from "@earendil-works/pi-ai/dist/utils/uuid.js";\nexport default function () { void uuidv7; }\n');
    const agent = start([file]);
    await agent.until(() => agent.stderr().includes("Failed to load extension"));
    expect(agent.stderr()).toMatch(/Cannot find module '[^']*pi-ai-view[^']*\/dist\/utils\/uuid\.js'/);
    expect(agent.stderr()).not.toContain("node_modules/@earendil-works");
  });
});

describe("the newest pi's library names at work", () => {
  it("uuidv7, the transcript helpers, ToolCallArgumentsStream, renderFakeCursor and the model catalogues behave; pi-tui 1.6's own classes are there; one value per name", async () => {
    const agent = start([join(AGENT_FIXTURES, "newest-libraries.js")]);
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "/newest-libraries" });
    const report = JSON.parse(notes(agent, from)[0] as string) as Record<string, unknown>;
    const tool = (name: string) => ({ name, description: name, parameters: { type: "object", properties: {} } });
    expect(report).toEqual({
      uuidFormat: true,
      uuidOrdered: true,
      uuidTime: true,
      // A given timestamp is kept: its 48 bits lead the id.
      uuidGiven: "01234567-89ab",
      // Contents joined, sections patched by name (null removes one), in the order first declared.
      prompt: "Base.\n\nLater.\n\n<rules>two</rules>",
      tools: ["read", "grep"],
      current: {
        role: "system",
        content: "Base.\n\nLater.",
        sections: { rules: "<rules>two</rules>" },
        toolsAdded: [tool("read"), tool("grep")],
        timestamp: 5,
      },
      collapsed: ["system", "user", "assistant"],
      none: [true, ""],
      partials: [{ path: "a" }, { path: "ab.txt" }, { path: "ab.txt", n: 2 }],
      finished: { arguments: { path: "ab.txt", n: 2 } },
      broken: { arguments: {}, argumentsError: expect.stringContaining('{"a": ') },
      fakeCursor: "\x1b_pi:fc\x07x\x1b_pi:/fc\x07",
      utils: [true, "stop", "abc\u{1f600}", true, false],
      mainScreen: "function",
      sameUuid: true,
      sameClass: true,
      sameType: true,
      catalogue: true,
      // pi-ai 1.6's provider objects: models read through getModels(), one streamSimple dispatching on model.api.
      builtin: { id: "local", models: ["m"], streamSimple: "function" },
      mixed: { id: "mixed", models: ["mine", "openai-completions"], streamSimple: "function" },
    });
    noErrors(agent);
  });

  it("an API provider registered through @earendil-works/pi-ai/compat is parley's: a model of that api answers through it", async () => {
    const agent = start([join(AGENT_FIXTURES, "newest-libraries.js")]);
    expect((await agent.request({ type: "set_model", provider: "compat-echo", modelId: "echo-1" }))["success"]).toBe(true);
    expect(replyText(await runPrompt(agent, "hello", 60_000))).toBe("echo: 1 user message(s)");
    noErrors(agent);
  });

  it("a provider made by createProvider with its own streams is registered by pi.registerProvider(provider); its streams get the newest pi's transcript", async () => {
    const agent = start([join(AGENT_FIXTURES, "newest-libraries.js")]);
    expect((await agent.request({ type: "set_model", provider: "made", modelId: "made-1" }))["success"]).toBe(true);
    expect(replyText(await runPrompt(agent, "hello", 60_000))).toBe("made: system / true");
    noErrors(agent);
  });
});

describe("createProvider with openAICompletionsApi()", () => {
  it("registers a provider whose model answers through pi-ai's OpenAI completions implementation, with the provider's key", async () => {
    const requests: { url: string | undefined; auth: string | undefined; body: { model?: string; messages?: { role: string }[] } }[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8").on("data", (d: string) => (body += d));
      req.on("end", () => {
        requests.push({ url: req.url, auth: req.headers.authorization, body: JSON.parse(body) as (typeof requests)[number]["body"] });
        res.writeHead(200, { "content-type": "text/event-stream" });
        const chunk = (delta: object, finish: string | null) =>
          `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "local-1", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        res.end(`${chunk({ role: "assistant", content: "hello from " }, null)}${chunk({ content: "the server" }, null)}${chunk({}, "stop")}data: [DONE]\n\n`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const args = ["--mode", "rpc", "--no-session", "-e", join(AGENT_FIXTURES, "newest-libraries.js")];
      const agent = procs.raw(args, { cwd: tempDir(), env: { ...process.env, PARLEY_TEST_OPENAI_URL: `http://127.0.0.1:${port}/v1` } });
      expect((await agent.request({ type: "set_model", provider: "local", modelId: "local-1" }))["success"]).toBe(true);
      expect(replyText(await runPrompt(agent, "hello", 60_000))).toBe("hello from the server");
      expect(requests).toHaveLength(1);
      expect(requests[0]).toMatchObject({ url: "/v1/chat/completions", auth: "Bearer local-key", body: { model: "local-1" } });
      expect(requests[0]?.body.messages?.map((m) => m.role)).toEqual(["system", "user"]);
      // provider_stream_event: one per parsed chunk the server sent, before normalisation, as pi 1.6 emits it.
      const from = agent.records.length;
      await agent.request({ type: "prompt", message: "/stream-events" });
      const events = JSON.parse(notes(agent, from)[0] as string) as unknown[];
      expect(events).toEqual(
        Array.from({ length: 3 }, () => ({ type: "provider_stream_event", provider: "local", api: expect.any(String), model: "local-1", id: "c1" })),
      );
      noErrors(agent);
    } finally {
      server.close();
    }
  });
});

describe("pi 1.6.0's example extensions that import its libraries", () => {
  it("all load in parley together (those made for the terminal UI just load)", async () => {
    const dir = join(packageDir("pi-newest"), "examples", "extensions");
    const uses = /from "@earendil-works\/pi-(ai|tui|agent-core)[^"]*"/;
    const found: string[] = [];
    const walk = (folder: string): void => {
      for (const entry of readdirSync(folder)) {
        const full = join(folder, entry);
        if (statSync(full).isDirectory()) {
          // A folder extension loads through its index.ts (its other files are its modules).
          const index = join(full, "index.ts");
          if (readdirSync(full).includes("index.ts") && walkUses(full)) found.push(index);
        } else if (entry.endsWith(".ts") && uses.test(readFileSync(full, "utf8"))) found.push(full);
      }
    };
    const walkUses = (folder: string): boolean =>
      readdirSync(folder).some((entry) => {
        const full = join(folder, entry);
        return statSync(full).isDirectory() ? walkUses(full) : entry.endsWith(".ts") && uses.test(readFileSync(full, "utf8"));
      });
    walk(dir);
    const names = found.map((f) => f.slice(dir.length + 1));
    expect(names).toEqual(
      expect.arrayContaining(["summarize.ts", "overlay-test.ts", "custom-provider-anthropic/index.ts", "custom-provider-gitlab-duo/index.ts"]),
    );
    const agent = start(found);
    const response = await agent.request({ type: "get_commands" }, 120_000);
    expect(response["success"]).toBe(true);
    expect(agent.stderr()).not.toContain("Failed to load extension");
    // Each loaded: each registered what it registers (summarize.ts its /summarize command).
    const commands = ((response["data"] as { commands: { name: string }[] }).commands ?? []).map((c) => c.name);
    expect(commands).toEqual(expect.arrayContaining(["summarize"]));
    // Only what RPC mode cannot do is reported (a virtual model), nothing about imports.
    const errors = agent.records.filter((r) => r.type === "extension_error").map((r) => String(r["error"]));
    expect(errors.filter((e) => !e.includes("virtual-model routing"))).toEqual([]);
  });
});
