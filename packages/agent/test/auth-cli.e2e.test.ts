/**
 * `parley auth …` against the newest pi's `pi auth …` through both spawned CLIs, each on its own
 * copy of the same auth.json: the same stdout, stderr (pi's name aside), exit status and the same
 * auth.json afterwards. Login runs in a pseudo-terminal (`script`), as both require one; nothing
 * reaches the internet (API key logins, and an account sign-in cancelled once its URL is shown).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Side, sideCommand } from "./helpers/newest-pi.js";
import { deadline } from "./helpers/spawn.js";

const AUTH = {
  openai: { type: "api_key", key: "sk-test-1" },
  anthropic: { type: "oauth", access: "acc-1", refresh: "ref-1", expires: 99_999_999_999_999 },
  groq: { type: "api_key", key: "GROQ_FROM_ENV" },
  deepseek: { type: "api_key", key: "$GROQ_FROM_ENV-${GROQ_FROM_ENV}$$" },
  mistral: { type: "api_key", key: "$UNSET_VARIABLE_FOR_THE_TEST" },
};

function agentDir(auth: object | undefined): { home: string; dir: string; file: string } {
  const home = mkdtempSync(join(tmpdir(), "parley-auth-cli-"));
  const dir = join(home, ".pi", "agent");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "auth.json");
  if (auth) writeFileSync(file, JSON.stringify(auth, null, 2), { mode: 0o600 });
  return { home, dir, file };
}

function env(home: string, dir: string): NodeJS.ProcessEnv {
  return { ...process.env, HOME: home, PI_CODING_AGENT_DIR: dir, PI_OFFLINE: "1", GROQ_FROM_ENV: "gsk-env" };
}

interface Outcome {
  status: number | null;
  stdout: string;
  stderr: string;
  auth: unknown;
}

/** Each program's output with its own name and folder written alike. */
const normalise = (text: string, dir: string): string =>
  text
    .split(dir)
    .join("<agent>")
    .replace(/\bpi (auth|--help)/g, "parley $1");

function run(bin: Side, args: string[], auth: object | undefined = AUTH): Outcome {
  const { home, dir, file } = agentDir(auth);
  const [command, ...pre] = sideCommand(bin);
  const result = spawnSync(command, [...pre, ...args], { env: env(home, dir), cwd: home, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  return {
    status: result.status,
    stdout: normalise(result.stdout, dir),
    stderr: normalise(result.stderr, dir),
    auth: existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined,
  };
}

const CASES: string[][] = [
  ["auth", "check", "--provider", "openai"],
  ["auth", "check", "--provider", "anthropic", "--json"],
  ["auth", "check", "--provider", "groq", "--json", "--credentials"],
  ["auth", "check", "--provider", "nope", "--json"],
  ["auth", "check", "--provider", "mistral"],
  ["auth", "check", "--provider", "anthropic", "--credentials", "--json"],
  ["auth", "check", "--provider", "anthropic", "--no-refresh", "--credentials"],
  ["auth", "check", "--model", "gpt-4o", "--json"],
  ["auth", "check"],
  ["auth", "check", "--bogus"],
  ["auth", "check", "--min-expiry", "1h", "--provider", "openai"],
  ["auth", "print-api-key", "--provider", "openai"],
  ["auth", "print-api-key", "--provider", "groq"],
  ["auth", "print-api-key", "--provider", "anthropic"],
  ["auth", "print-api-key", "--provider", "deepseek"],
  ["auth", "print-api-key", "--provider", "mistral"],
  ["auth", "check", "--provider", "mistral", "--json"],
  ["auth", "print-api-key", "--model", "gpt-4o"],
  ["auth", "print-api-key", "--provider", "nope"],
  ["auth", "print-api-key"],
  ["auth", "print-api-key", "--json", "--provider", "openai"],
  ["auth", "print-api-key", "--provider", "openai", "extra"],
  ["auth", "print-bearer-token", "--provider", "anthropic"],
  ["auth", "print-bearer-token", "--provider", "anthropic", "--min-expiry", "2h"],
  ["auth", "print-bearer-token", "--provider", "openai"],
  ["auth", "print-bearer-token", "--provider", "anthropic", "--min-expiry", "soon"],
  ["auth", "frobnicate"],
  ["auth", "logout", "openai"],
  ["auth", "logout", "anthropic"],
  ["auth", "logout", "mistral"],
  ["auth", "logout", "nope"],
  ["auth", "logout"],
  ["auth", "logout", "openai", "anthropic"],
  ["auth", "login"],
  ["auth", "login", "openai", "--api-key", "--no-browser"],
  ["auth", "login", "nope"],
  ["auth", "login", "openai"],
];

describe("parley auth as pi 1.6's auth", () => {
  it.each(CASES.map((args) => [args.join(" "), args] as const))("%s", (_name, args) => {
    const ours = run("parley", args);
    const pis = run("pi", args);
    expect(ours).toEqual(pis);
  });

  it("logout on a missing auth.json", () => {
    expect(run("parley", ["auth", "logout", "openai"], undefined)).toEqual(run("pi", ["auth", "logout", "openai"], undefined));
  });
});

/** Runs a command in a pseudo-terminal, answering each prompt (a pattern in the output so far) once. */
function inTerminal(bin: Side, args: string[], answers: [RegExp, string][], auth?: object): Promise<{ output: string; status: number | null; file: string }> {
  const { home, dir, file } = agentDir(auth);
  const command = [...sideCommand(bin), ...args].join(" ");
  const child = spawn("script", ["-qfec", command, "/dev/null"], { env: env(home, dir), cwd: home, stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  const pending = [...answers];
  child.stdout.on("data", (d: Buffer) => {
    output += d.toString();
    const next = pending[0];
    if (next && next[0].test(output)) {
      pending.shift();
      child.stdin.write(next[1]);
    }
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), deadline(120_000));
  return new Promise((ok) =>
    child.on("close", (status) => {
      clearTimeout(timer);
      ok({ output: normalise(output, dir).replace(/\r/g, ""), status, file });
    }),
  );
}

describe("parley auth login in a terminal, as pi 1.6's", () => {
  it("saves a typed API key to auth.json (mode 0600)", async () => {
    const runs = await Promise.all(
      (["parley", "pi"] as const).map((bin) => inTerminal(bin, ["auth", "login", "openai", "--api-key"], [[/API key: /, "sk-typed\r"]])),
    );
    for (const r of runs) {
      expect(r.status).toBe(0);
      expect(JSON.parse(readFileSync(r.file, "utf8"))).toEqual({ openai: { type: "api_key", key: "sk-typed" } });
      expect(statSync(r.file).mode & 0o777).toBe(0o600);
      // The terminal may echo the key typed before the program turned echo off: the lines around it only.
      expect(r.output).toContain("Enter OpenAI API key: ");
      expect(r.output.endsWith("\nSaved API key for OpenAI. Credentials saved to <agent>/auth.json\n")).toBe(true);
    }
  });

  it("keeps the other entries of auth.json when a key is added", async () => {
    const r = await inTerminal("parley", ["auth", "login", "openai", "--api-key"], [[/API key: /, "sk-new\r"]], AUTH);
    expect(r.status).toBe(0);
    expect(JSON.parse(readFileSync(r.file, "utf8"))).toEqual({ ...AUTH, openai: { type: "api_key", key: "sk-new" } });
  });

  it("prints an account sign-in's URL and asks for the code; Ctrl+C cancels it and nothing is written", async () => {
    const runs = await Promise.all(
      (["parley", "pi"] as const).map((bin) => inTerminal(bin, ["auth", "login", "anthropic"], [[/redirect URL here: /, "\u0003"]])),
    );
    const [ours, pis] = runs.map((r) => ({
      status: r.status,
      // pi creates an empty auth.json on the way; nothing is stored either way.
      stored: existsSync(r.file) ? JSON.parse(readFileSync(r.file, "utf8")) : {},
      // The URL carries a fresh PKCE challenge and state each time.
      text: r.output.replace(/https:\/\/claude\.ai\/oauth\/authorize\?\S+/, "<url>"),
    }));
    expect(ours?.text).toContain("Open this URL to sign in:\n  <url>\n");
    expect(ours?.text).toContain("Login cancelled.\n");
    expect(ours).toEqual(pis);
  });
});
