/**
 * Every command line `pi --help` documents (pi 0.73.1's examples and options, and pi 1.6.0's), run
 * against pi 1.6.0 (`pi-newest`, on this Node) and parley in RPC mode: wherever pi starts and answers
 * get_state, parley must too, and both must run the same model. Both load the same offline
 * provider extension; the agent directory and HOME are temporary, and no API key is set.
 * The one-shot lines (`--export`, `--list-models`, `--help`, `--version`) run without a mode and
 * must end as pi's do. A last test reads pi 1.6.0's and pi 0.73.1's `--help` (and the option list
 * kept from pi 1.6's source) and fails when an option of any is in no line.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { cwdSlug } from "../src/session/store.js";
import { PARLEY_BIN, PI_NEWEST_CLI, ROOT, spawnAgent } from "./helpers/spawn.js";
import { AGENT_CEILING_MS, deadline } from "./helpers/deadline.js";

const FIXTURE = resolve(import.meta.dirname, "fixtures/pi-dropin/offline-provider.ts");
const SESSION_ID = "0199f0aa-1111-7222-8333-444455556666";

/** API-key variables a developer's shell may hold: blanked so that only the fixture has credentials. */
const NO_KEYS: NodeJS.ProcessEnv = Object.fromEntries(
  Object.keys(process.env)
    .filter((k) => /_API_KEY$|_TOKEN$|^AWS_|^AZURE_|^GOOGLE_|^CLOUDFLARE_/.test(k))
    .map((k) => [k, ""]),
);

// Placeholders: {SESSION} a session file, {DIR} an empty folder, {ID} the session's id.
const LINES_0731: string[][] = [
  [],
  ["List all .ts files in src/"],
  ["-p", "List all .ts files in src/"],
  ["Read package.json", "What dependencies do we have?"],
  ["--continue", "What did we discuss?"],
  ["--provider", "openai", "--model", "gpt-4o-mini", "Help me refactor this code"],
  ["--model", "openai/gpt-4o", "Help me refactor this code"],
  ["--model", "sonnet:high", "Solve this complex problem"],
  ["--models", "claude-sonnet,claude-haiku,gpt-4o"],
  ["--models", "github-copilot/*"],
  ["--models", "sonnet:high,haiku:low"],
  ["--thinking", "high", "Solve this complex problem"],
  ["--tools", "read,grep,find,ls", "-p", "Review the code in src/"],
];
/** The newest pi's examples and the flags 0.73.1 does not have: the newest pi starts with each. */
const LINES_NEWEST: string[][] = [
  ["auth", "print-api-key", "--provider", "openai"],
  ["--name", "Refactor auth module"],
  ["-p", "--", "- Summarize these points"],
  ["--exclude-tools", "ask_question"],
  ["-xt", "bash", "-n", "short name", "--session-id", "my-session-1"],
  ["--use-theme", "dark", "--tui-mode", "regular", "--approve"],
  ["-a", "--thinking", "max"],
  ["--no-approve"],
  ["-na"],
  // npm 1.6.0's additions (built-in MCP and codemode, which parley does not have: see the README).
  ["auth", "print-bearer-token", "--provider", "openai-codex"],
  ["--tools", "+codemode"],
  ["--tools", "read,bash,codemode,mcp__radius__*"],
  ["--no-mcp", "--extension", "{FIXTURE}"],
];
/** The newest pi's options (npm 1.6.0's `--help`), short forms included: facts, for the coverage check. */
const NEWEST_OPTIONS = [
  "--provider",
  "--model",
  "--api-key",
  "--system-prompt",
  "--append-system-prompt",
  "--mode",
  "--print",
  "-p",
  "--continue",
  "-c",
  "--resume",
  "-r",
  "--session",
  "--session-id",
  "--fork",
  "--session-dir",
  "--no-session",
  "--name",
  "-n",
  "--models",
  "--no-tools",
  "-nt",
  "--no-builtin-tools",
  "-nbt",
  "--tools",
  "-t",
  "--exclude-tools",
  "-xt",
  "--thinking",
  "--extension",
  "-e",
  "--no-extensions",
  "-ne",
  "--no-mcp",
  "--skill",
  "--no-skills",
  "-ns",
  "--prompt-template",
  "--no-prompt-templates",
  "-np",
  "--theme",
  "--use-theme",
  "--no-themes",
  "--no-context-files",
  "-nc",
  "--export",
  "--list-models",
  "--verbose",
  "--tui-mode",
  "--approve",
  "-a",
  "--no-approve",
  "-na",
  "--offline",
  "--",
  "--help",
  "-h",
  "--version",
  "-v",
];
/** Lines that do one thing and exit (run without --mode): the exit status must be pi's. */
const ONE_SHOT_LINES: string[][] = [
  ["--export", "{SESSION}", "{DIR}/out.html"],
  ["--export", "{SESSION}"],
  ["--list-models"],
  ["--list-models", "echo"],
  ["--help"],
  ["-h"],
  ["--version"],
  ["-v"],
];
/**
 * Every option of pi 0.73.1's help, short forms included, a few per line (each line is a start of
 * both agents; the box is shared).
 */
const OPTION_LINES: string[][] = [
  ["--provider", "fixture", "--model", "echo-1", "--system-prompt", "You are terse.", "--print"],
  ["--model", "fixture/echo-1", "--api-key", "another-key", "--append-system-prompt", "Be kind.", "--append-system-prompt", "Be brief."],
  ["--model", "echo-1", "-c", "--no-tools", "--thinking", "off", "--no-skills", "--no-themes"],
  ["--resume", "-nbt", "--skill", "{DIR}", "-np", "--verbose"],
  ["-r", "-nt", "--prompt-template", "{DIR}", "-ns", "--offline"],
  ["--session", "{SESSION}", "-t", "read,bash", "--no-prompt-templates", "--theme", "{DIR}"],
  ["--session", "0199f0aa", "--no-builtin-tools", "--no-context-files"],
  ["--session", "{DIR}/new-session.jsonl", "--tools", "read", "-nc"],
  ["--fork", "{SESSION}", "--models", "echo-1"],
  ["--fork", "0199f0aa", "--session-dir", "{DIR}", "--thinking", "bogus"],
  ["--no-session", "-ne", "-p"],
  ["--no-extensions", "--provider", "fixture"],
];

/**
 * Lines pi refuses at start-up (flag errors, a session or model that cannot be found, @file in RPC
 * mode) and one it only warns about: parley must end each with pi's exit status.
 */
const BAD_LINES: string[][] = [
  ["--bogus"],
  ["-e"],
  ["--fork", "{SESSION}", "--session", "{SESSION}"],
  ["--fork", "{SESSION}", "-c"],
  ["--session", "no-such-session"],
  ["--fork", "no-such-session"],
  ["--provider", "no-such-provider", "--model", "x"],
  ["--model", "no-such-provider/nothing"],
  ["@prompt.md", "hi"],
  ["--thinking", "bogus"],
];

interface Outcome {
  started: boolean;
  model?: string;
  code: number | null;
  stderr: string;
}

function prepare(): { cwd: string; agentDir: string; dir: string; session: string; home: string } {
  const root = mkdtempSync(join(tmpdir(), "parley-help-lines-"));
  const cwd = join(root, "project");
  const agentDir = join(root, "agent");
  const dir = join(root, "empty");
  // The programs' HOME too: pi writes ~/.pi/agent/auth.json on start-up, which must not be the user's.
  const home = join(root, "home");
  for (const d of [cwd, agentDir, dir, home]) mkdirSync(d, { recursive: true });
  // A session of this project, in pi's place for it, so --session/--fork by id find it.
  const sessions = join(agentDir, "sessions", cwdSlug(cwd));
  mkdirSync(sessions, { recursive: true });
  const session = join(sessions, `2026-01-01T00-00-00-000Z_${SESSION_ID}.jsonl`);
  const t = "2026-01-01T00:00:00.000Z";
  writeFileSync(
    session,
    [
      { type: "session", version: 3, id: SESSION_ID, timestamp: t, cwd },
      { type: "message", id: "a0000001", parentId: null, timestamp: t, message: { role: "user", content: "hello", timestamp: 1 } },
    ]
      .map((r) => JSON.stringify(r))
      .join("\n") + "\n",
  );
  return { cwd, agentDir, dir, session, home };
}

const expand = (line: string[], place: { session: string; dir: string }): string[] =>
  line.map((a) => a.replace("{SESSION}", place.session).replace("{DIR}", place.dir).replace("{ID}", SESSION_ID).replace("{FIXTURE}", FIXTURE));

/**
 * Runs a one-shot line to its end: exit status, whether it said something, and the HTML files it
 * wrote (in the project or {DIR}). Where it says it is not compared: with stdin not a terminal,
 * pi 0.73.1 sends even `--help` and `--version` to stderr; the newest pi and parley use stdout.
 */
function runOneShot(bin: string, line: string[]): { code: number | null; said: boolean; html: string[] } {
  const place = prepare();
  const result = spawnSync(bin, [...expand(line, place), "-e", FIXTURE], {
    cwd: place.cwd,
    env: { ...process.env, ...NO_KEYS, HOME: place.home, PI_CODING_AGENT_DIR: place.agentDir, PI_OFFLINE: "1" },
    encoding: "utf8",
    timeout: 120_000,
  });
  const html = [place.cwd, place.dir].flatMap((d) =>
    readdirSync(d)
      .filter((f) => f.endsWith(".html"))
      .map((f) => (d === place.dir ? `{DIR}/${f}` : f)),
  );
  return { code: result.status, said: `${result.stdout}${result.stderr}`.trim() !== "", html };
}

/** Starts the agent with `line` (plus --mode rpc and the fixture), asks get_state, closes stdin. */
async function run(bin: string, line: string[]): Promise<Outcome> {
  const place = prepare();
  const args = expand(line, place);
  const agent = spawnAgent(bin, ["--mode", "rpc", "-e", FIXTURE, ...args], {
    cwd: place.cwd,
    env: { ...NO_KEYS, HOME: place.home, PI_CODING_AGENT_DIR: place.agentDir, PI_OFFLINE: "1" },
  });
  const answered = agent.request({ type: "get_state" }, 90_000).then(
    (r) => r,
    () => undefined,
  );
  const outcome = await Promise.race([answered, agent.exited.then(() => undefined)]);
  let model: string | undefined;
  if (outcome && outcome["success"] === true) {
    const data = outcome["data"] as { model?: { provider: string; id: string } };
    model = data.model ? `${data.model.provider}/${data.model.id}` : undefined;
  }
  agent.closeInput();
  const timer = setTimeout(() => agent.kill(), deadline(AGENT_CEILING_MS));
  const { code } = await agent.exited;
  clearTimeout(timer);
  return { started: outcome?.["success"] === true, ...(model !== undefined ? { model } : {}), code, stderr: agent.stderr() };
}

/** A few at a time: the box is shared, and pi takes a second or more to start. */
async function runAll(lines: string[][], withPi: boolean): Promise<{ line: string[]; pi?: Outcome; parley: Outcome }[]> {
  const results: { line: string[]; pi?: Outcome; parley: Outcome }[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < lines.length) {
      const line = lines[next++] as string[];
      const pi = withPi ? await run(PI_NEWEST_CLI, line) : undefined;
      const parley = await run(PARLEY_BIN, line);
      results.push({ line, ...(pi ? { pi } : {}), parley });
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

describe("every command line of pi --help, against pi and parley", () => {
  it(
    "parley starts wherever pi 0.73.1 starts, with the same model",
    async () => {
      const results = await runAll([...LINES_0731, ...OPTION_LINES], true);
      const problems: string[] = [];
      for (const { line, pi, parley } of results) {
        const shown = JSON.stringify(line);
        if (!pi) continue;
        if (pi.started && !parley.started) problems.push(`${shown}: pi starts, parley does not (exit ${parley.code}): ${parley.stderr.trim()}`);
        // Where pi runs the fixture's model, parley must run it too (a real model is not comparable without keys).
        if (pi.started && parley.started && pi.model?.startsWith("fixture/") && pi.model !== parley.model) {
          problems.push(`${shown}: pi runs ${pi.model}, parley ${parley.model}`);
        }
        if (parley.started && parley.code !== 0) problems.push(`${shown}: parley exited ${parley.code} after EOF`);
      }
      expect(problems).toEqual([]);
      // The check means something only if pi itself starts on most of them.
      expect(results.filter((r) => r.pi?.started).length).toBeGreaterThan(results.length / 2);
    },
    20 * 60_000,
  );

  it(
    "parley starts with the newest pi's examples and flags",
    async () => {
      const results = await runAll(LINES_NEWEST, false);
      const failed = results
        .filter((r) => !r.parley.started || r.parley.code !== 0)
        .map((r) => `${JSON.stringify(r.line)}: exit ${r.parley.code}: ${r.parley.stderr.trim()}`);
      expect(failed).toEqual([]);
    },
    10 * 60_000,
  );

  it("both refuse @file arguments in RPC mode, and parley says why before anything else", async () => {
    const line = ["@prompt.md", "What color is the sky?"];
    const [pi, parley] = [await run(PI_NEWEST_CLI, line), await run(PARLEY_BIN, line)];
    expect(pi.started).toBe(false);
    expect(parley.started).toBe(false);
    expect(parley.code).not.toBe(0);
    expect(parley.stderr.split("\n")[0]).toContain("@file arguments are not supported in RPC mode");
  }, 180_000);

  it("the one-shot lines end as they end with pi", () => {
    const differing: string[] = [];
    for (const line of ONE_SHOT_LINES) {
      const pi = runOneShot(PI_NEWEST_CLI, line);
      const parley = runOneShot(PARLEY_BIN, line);
      if (!pi.said || JSON.stringify(pi) !== JSON.stringify(parley))
        differing.push(`${JSON.stringify(line)}: pi ${JSON.stringify(pi)}, parley ${JSON.stringify(parley)}`);
    }
    expect(differing).toEqual([]);
  }, 600_000);

  it(
    "bad command lines exit with pi's status (1 for every start-up error, 0 after EOF for a warning)",
    async () => {
      const statuses = async (line: string[]) => {
        const [pi, parley] = await Promise.all([run(PI_NEWEST_CLI, line), run(PARLEY_BIN, line)]);
        return { line: JSON.stringify(line), pi: pi.code, parley: parley.code, piStarted: pi.started, parleyStarted: parley.started };
      };
      const results = [];
      for (const line of BAD_LINES) results.push(await statuses(line));
      expect(results.filter((r) => r.pi !== r.parley || r.piStarted !== r.parleyStarted)).toEqual([]);
      // Each line is one pi refuses (bar the warning line), so the comparison is about errors.
      expect(results.filter((r) => r.pi === 1).length).toBe(BAD_LINES.length - 1);
    },
    10 * 60_000,
  );

  it("every option of pi 1.6.0's --help (and of pi 0.73.1's) is in one of the lines above", () => {
    const { home, agentDir } = prepare();
    /** The option names a pi CLI's --help lists (both print it on stderr when stdin is not a terminal). */
    const helpOptions = (cli: string): string[] => {
      const help = spawnSync(process.execPath, [cli, "--help"], {
        encoding: "utf8",
        env: { ...process.env, ...NO_KEYS, HOME: home, PI_CODING_AGENT_DIR: agentDir },
      });
      const options =
        `${help.stdout}${help.stderr}`
          .replace(/\u001b\[[0-9;]*m/g, "")
          .split(/\n(?=\S)/)
          .find((section) => section.startsWith("Options:")) ?? "";
      // Each option line starts with its names: "  --print, -p   ..." or "  --tools, -t <tools>  ..."; "--" ends the options.
      return options.split("\n").flatMap((l) => /^ {2}(-[-\w]+(?:, -[-\w]+)*)/.exec(l)?.[1]?.split(", ") ?? []);
    };
    const newest = helpOptions(PI_NEWEST_CLI);
    const old = helpOptions(join(ROOT, "node_modules/@mariozechner/pi-coding-agent/dist/cli.js"));
    for (const documented of [newest, old]) expect(documented).toEqual(expect.arrayContaining(["--provider", "--print", "-p", "--no-themes", "--version"]));
    expect(newest).toEqual(expect.arrayContaining(["--no-mcp", "--session-id", "--approve"]));
    // Every line runs with --mode rpc and -e (the fixture) besides its own flags.
    const used = new Set(["--mode", "-e", ...[...LINES_0731, ...LINES_NEWEST, ...OPTION_LINES, ...ONE_SHOT_LINES].flat()]);
    expect([...new Set([...newest, ...old, ...NEWEST_OPTIONS])].filter((option) => !used.has(option))).toEqual([]);
  }, 120_000);
});
