/**
 * auth.json API keys read as pi 1.6 reads them, in every mode: `$VAR` and `${VAR}` templates (the
 * credential's own `env` first), `$$` and `$!`, `!command`, and a bare name taken as the key
 * itself (pi 0.73 took it for an environment variable's name). A local chat-completions server
 * answers with the key its request carried; pi 1.6 and parley, spawned on the same Node with the
 * same auth.json, must send the same key, in print mode, and parley also in json and rpc mode and
 * in `auth print-api-key`.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_CEILING_MS, deadline } from "./helpers/deadline.js";
import { NO_KEYS, place, write } from "./helpers/pi-home.js";
import { type CliResult, runSide, type Side } from "./helpers/newest-pi.js";

const RUN_MS = deadline(3 * AGENT_CEILING_MS);
const TEST_MS = deadline(30 * AGENT_CEILING_MS);

/** The chat-completions server: its answer is `key=<the bearer token received>`. */
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    const key = /^Bearer (.*)$/.exec(req.headers.authorization ?? "")?.[1] ?? "(none)";
    const chunk = (b: object): string => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "m1", ...b })}\n\n`;
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(
      chunk({ choices: [{ index: 0, delta: { role: "assistant", content: `key=${key}` }, finish_reason: null }] }) +
        chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }) +
        "data: [DONE]\n\n",
    );
  });
});
let baseUrl = "";
beforeAll(async () => {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((done) => server.close(() => done())));

/** Runs the CLI; `input` is written to stdin, which ends at once, or (rpc) once stdout has `endAfter`. */
function run(side: Side, args: string[], env: NodeJS.ProcessEnv, cwd: string, input = "", endAfter?: string): Promise<CliResult> {
  return runSide(side, args, {
    cwd,
    env,
    ms: RUN_MS,
    input,
    holdStdin: endAfter !== undefined,
    onStdout: (stdout, child) => {
      if (endAfter !== undefined && stdout.includes(endAfter)) child.stdin?.end();
    },
  });
}

/** What the keys below read as, pi 1.6's rule. MY_KEY is set in the environment, UNSET_KEY is not. */
const CASES: { key: string; env?: Record<string, string>; sent: string }[] = [
  { key: "sk-literal-1", sent: "sk-literal-1" },
  { key: "MY_KEY", sent: "MY_KEY" },
  { key: "$MY_KEY", sent: "from-environment" },
  { key: "${MY_KEY}-suffix", sent: "from-environment-suffix" },
  { key: "$$MY_KEY", sent: "$MY_KEY" },
  { key: "$!bang", sent: "!bang" },
  { key: "!echo from-command", sent: "from-command" },
  { key: "$OWN", env: { OWN: "from-credential-env" }, sent: "from-credential-env" },
  { key: "$MY_KEY", env: { MY_KEY: "credential-env-first" }, sent: "credential-env-first" },
];

describe("auth.json keys, as pi 1.6 reads them", () => {
  it(
    "print mode sends the same key as pi 1.6 for every form of key",
    async () => {
      const p = place("parley-auth-keys-");
      write(join(p.agentDir, "models.json"), {
        providers: { echo: { baseUrl, api: "openai-completions", models: [{ id: "m1", contextWindow: 8192, maxTokens: 512 }] } },
      });
      const env = { ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir, MY_KEY: "from-environment", NO_COLOR: "1" };
      for (const { key, env: credentialEnv, sent } of CASES) {
        write(join(p.agentDir, "auth.json"), { echo: { type: "api_key", key, ...(credentialEnv ? { env: credentialEnv } : {}) } });
        const args = ["--no-session", "--model", "echo/m1", "-p", "hello"];
        const [pi, parley] = await Promise.all([run("pi", args, env, p.cwd), run("parley", args, env, p.cwd)]);
        expect(pi.stdout.trim(), `pi with ${key}: ${pi.stderr}`).toBe(`key=${sent}`);
        expect({ code: parley.code, out: parley.stdout.trim() }, `parley with ${key}: ${parley.stderr}`).toEqual({ code: pi.code, out: `key=${sent}` });
      }
    },
    TEST_MS,
  );

  it(
    "json and rpc mode and auth print-api-key read the key the same way",
    async () => {
      const p = place("parley-auth-keys-");
      write(join(p.agentDir, "models.json"), {
        providers: { echo: { baseUrl, api: "openai-completions", models: [{ id: "m1", contextWindow: 8192, maxTokens: 512 }] } },
      });
      const env = { ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir, MY_KEY: "from-environment", NO_COLOR: "1" };
      write(join(p.agentDir, "auth.json"), {
        echo: { type: "api_key", key: "MY_KEY" },
        openai: { type: "api_key", key: "${MY_KEY}-openai" },
        groq: { type: "api_key", key: "MY_KEY" },
      });

      const json = await run("parley", ["--no-session", "--model", "echo/m1", "--mode", "json", "hello"], env, p.cwd);
      expect(json.stdout, json.stderr).toContain("key=MY_KEY");
      expect(json.stdout).not.toContain("key=from-environment");

      const prompt = `${JSON.stringify({ id: "1", type: "prompt", message: "hello" })}\n`;
      const rpc = await run("parley", ["--no-session", "--model", "echo/m1", "--mode", "rpc"], env, p.cwd, prompt, '"type":"agent_settled"');
      expect(rpc.stdout, rpc.stderr).toContain("key=MY_KEY");

      for (const provider of ["openai", "groq"]) {
        const args = ["auth", "print-api-key", "--provider", provider];
        const [pi, parley] = await Promise.all([run("pi", args, env, p.cwd), run("parley", args, env, p.cwd)]);
        expect({ code: parley.code, stdout: parley.stdout }).toEqual({ code: pi.code, stdout: pi.stdout });
        expect(parley.stdout.trim()).toBe(provider === "openai" ? "from-environment-openai" : "MY_KEY");
      }
    },
    TEST_MS,
  );
});
