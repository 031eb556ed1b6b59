/**
 * `parley --mode web` ends as RPC mode does (one process lifetime for every mode): a signal while
 * the model's bash tool runs a marker `sleep` kills the marker and exits with 128+n.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connectRaw, START_MS, startWeb, type RawClient, type WebAgent } from "./helpers/web-server.js";

const running: { agent: WebAgent; client?: RawClient }[] = [];
afterEach(async () => {
  for (const { agent, client } of running.splice(0)) {
    await client?.close();
    if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill("SIGKILL");
  }
});

/** Alive: exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

async function poll(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + START_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("parley --mode web: signals", () => {
  for (const [signal, code] of [
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const) {
    it(
      `${signal} while a bash tool call runs: the marker dies and parley exits ${code}`,
      async () => {
        const dir = mkdtempSync(join(tmpdir(), "parley-web-life-"));
        const pidFile = join(dir, "marker.pid");
        const command = `sleep 29.5 & echo $! > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}; wait`;
        const script = join(dir, "script.json");
        writeFileSync(script, JSON.stringify([{ toolCalls: [{ name: "bash", arguments: { command } }] }, "done"]));
        const agent = await startWeb(["--model-script", script, "--no-extensions"], { cwd: dir });
        const entry: { agent: WebAgent; client?: RawClient } = { agent };
        running.push(entry);
        const client = await connectRaw(agent.wsUrl);
        entry.client = client;
        expect((await client.request({ type: "prompt", message: "run it" }))["success"]).toBe(true);
        await poll(() => existsSync(pidFile), "the marker's pid file");
        const pid = Number(readFileSync(pidFile, "utf8").trim());
        expect(alive(pid)).toBe(true);
        agent.child.kill(signal);
        expect((await agent.exited).code, agent.stderr()).toBe(code);
        await poll(() => !alive(pid), `the marker ${pid} to end`);
      },
      2 * START_MS,
    );
  }
});
