/**
 * `parley --mode web` ends as RPC mode does (one process lifetime for every mode): a signal while
 * the model's bash tool runs a marker `sleep` kills the marker and exits with 128+n.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { alive, markerCommand, poll, SIGNAL_EXITS } from "../../agent/test/helpers/marker.js";
import { connectRaw, START_MS, startWeb, type RawClient, type WebAgent } from "./helpers/web-server.js";

const running: { agent: WebAgent; client?: RawClient }[] = [];
afterEach(async () => {
  for (const { agent, client } of running.splice(0)) {
    await client?.close();
    if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill("SIGKILL");
  }
});

describe("parley --mode web: signals", () => {
  for (const [signal, code] of SIGNAL_EXITS) {
    it(
      `${signal} while a bash tool call runs: the marker dies and parley exits ${code}`,
      async () => {
        const dir = mkdtempSync(join(tmpdir(), "parley-web-life-"));
        const marker = markerCommand(dir);
        const script = join(dir, "script.json");
        writeFileSync(script, JSON.stringify([{ toolCalls: [{ name: "bash", arguments: { command: marker.command } }] }, "done"]));
        const agent = await startWeb(["--model-script", script, "--no-extensions"], { cwd: dir });
        const entry: { agent: WebAgent; client?: RawClient } = { agent };
        running.push(entry);
        const client = await connectRaw(agent.wsUrl);
        entry.client = client;
        expect((await client.request({ type: "prompt", message: "run it" }))["success"]).toBe(true);
        const pid = await marker.pid();
        expect(alive(pid)).toBe(true);
        agent.child.kill(signal);
        expect((await agent.exited).code, agent.stderr()).toBe(code);
        await poll(() => !alive(pid), `the marker ${pid} to end`);
      },
      2 * START_MS,
    );
  }
});
