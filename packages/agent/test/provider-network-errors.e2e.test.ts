/**
 * A real provider that cannot be reached: the failed reply, the retry cycle's end and stderr say
 * why (a DNS failure for which host, a refused port, the HTTP status) and how long parley retried,
 * not only the SDK's "Connection error.". Everything stays on this machine: a closed port and a
 * server on 127.0.0.1, and a host under `.invalid`, which never resolves.
 */
import { createServer, type Server } from "node:http";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PARLEY_BIN, spawnAgent, type AgentProcess, type Rec } from "./helpers/spawn.js";

const TEST_MS = 180_000;
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
}

/** A port nothing listens on: one the system gave out and that was closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** An OpenAI-style server that answers every request with 503. */
async function failingServer(): Promise<number> {
  const server = createServer((_req, res) => {
    res.writeHead(503, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "upstream is down for maintenance", type: "server_error" } }));
  });
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return listen(server);
}

/** parley on a models.json provider at `baseUrl`, one retry after 10 ms (so the test does not wait pi's 2 s). */
function agentFor(baseUrl: string): AgentProcess {
  const base = mkdtempSync(join(tmpdir(), "parley-net-"));
  cleanups.push(() => rmSync(base, { recursive: true, force: true }));
  const agentDir = join(base, "agent");
  mkdirSync(agentDir, { recursive: true });
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ retry: { enabled: true, maxRetries: 1, baseDelayMs: 10 } }));
  const model = {
    id: "m",
    name: "M",
    reasoning: false,
    input: ["text"],
    contextWindow: 8000,
    maxTokens: 1000,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  };
  const provider = { baseUrl, api: "openai-completions", apiKey: "local-key", compat: { supportsDeveloperRole: false }, models: [model] };
  writeFileSync(join(agentDir, "models.json"), JSON.stringify({ providers: { local: provider } }));
  const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--no-session", "--provider", "local", "--model", "m"], {
    cwd: base,
    env: { PI_CODING_AGENT_DIR: agentDir },
  });
  cleanups.push(() => agent.kill());
  return agent;
}

/** Prompts and waits for the run to settle; the failed reply, the retry cycle's end and stderr. */
async function failedRun(agent: AgentProcess): Promise<{ errors: string[]; finalError: string; stderr: string }> {
  const response = await agent.request({ type: "prompt", message: "hello" });
  expect(response["success"], JSON.stringify(response)).toBe(true);
  await agent.waitFor((r) => r.type === "agent_settled");
  const errors = agent.records.flatMap((r: Rec) => {
    const message = r.type === "message_end" ? (r["message"] as { role?: string; stopReason?: string; errorMessage?: string }) : undefined;
    return message?.role === "assistant" && message.stopReason === "error" ? [message.errorMessage ?? ""] : [];
  });
  const end = agent.records.find((r) => r.type === "auto_retry_end");
  // stderr is written as the run ends; wait for the line that closes it.
  await agent.until(() => agent.stderr().includes("giving up on the request"));
  return { errors, finalError: String(end?.["finalError"] ?? ""), stderr: agent.stderr() };
}

describe("a provider parley cannot reach", () => {
  it(
    "an unresolvable host: the DNS failure and the host name, and the retries, in the reply, the retry's end and on stderr",
    async () => {
      const { errors, finalError, stderr } = await failedRun(agentFor("http://nonexistent.invalid/v1"));
      expect(errors).toHaveLength(2);
      for (const error of errors) expect(error).toMatch(/DNS lookup of nonexistent\.invalid failed \((ENOTFOUND|EAI_AGAIN)/);
      expect(finalError).toContain("nonexistent.invalid");
      expect(finalError).toMatch(/retried 1 time, waiting 10 ms in all/);
      expect(stderr).toMatch(/the request to local\/m failed: .*DNS lookup of nonexistent\.invalid failed/);
      expect(stderr).toMatch(/giving up on the request: .*nonexistent\.invalid.*retried 1 time/);
    },
    TEST_MS,
  );

  it(
    "a refused port: the address and that it refused, in the reply, the retry's end and on stderr",
    async () => {
      const port = await closedPort();
      const { errors, finalError, stderr } = await failedRun(agentFor(`http://127.0.0.1:${port}/v1`));
      expect(errors).toHaveLength(2);
      for (const error of errors) expect(error).toContain(`127.0.0.1:${port} refused the connection (ECONNREFUSED`);
      expect(finalError).toContain(`127.0.0.1:${port} refused the connection`);
      expect(finalError).toMatch(/retried 1 time/);
      expect(stderr).toContain(`127.0.0.1:${port} refused the connection`);
    },
    TEST_MS,
  );

  it(
    "a server answering 503: the status in the reply, and how long parley retried in the retry's end and on stderr",
    async () => {
      const port = await failingServer();
      const { errors, finalError, stderr } = await failedRun(agentFor(`http://127.0.0.1:${port}/v1`));
      expect(errors).toHaveLength(2);
      for (const error of errors) expect(error).toContain("503");
      expect(finalError).toMatch(/503.*retried 1 time, waiting 10 ms in all/s);
      expect(stderr).toMatch(/giving up on the request: .*503.*retried 1 time/s);
    },
    TEST_MS,
  );
});
