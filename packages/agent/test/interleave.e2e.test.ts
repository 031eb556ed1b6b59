/**
 * Commands arriving while other commands, a run, a shell command or a dialog are in flight
 * (issue 14, item 1): the regression that hung parley, then the class, as a fast-check model test
 * over the spawned CLI (scripts/interleave.mjs: every id answered exactly once, get_state always
 * answered, the run settles, EOF exits 0). `npm run fuzz -- --interleave` runs many more and longer
 * scenarios; set INTERLEAVE_SEED to replay one here.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { ROOT, type Rec } from "./helpers/spawn.js";
import { processRegistry, tempDir, writeScript } from "./fixtures/agent/harness.js";

interface Report {
  scenario: unknown;
  failures: string[];
  stderr: string;
  seed: number;
}
interface InterleaveModule {
  checkInterleavings(options: { runs: number; seed?: number; maxCommands?: number; log?: (m: string) => void }): Promise<Report | undefined>;
}
const load = async (): Promise<InterleaveModule> => (await import(pathToFileURL(join(ROOT, "scripts/interleave.mjs")).href)) as InterleaveModule;

const procs = processRegistry();
const CEILING_MS = 60_000;

describe("a command right behind another", () => {
  for (const chunking of ["one chunk", "two writes"] as const) {
    it(
      `a prompt right behind a bash command is answered and runs (${chunking})`,
      async () => {
        const agent = procs.parley(["--model-script", writeScript(["after bash"]), "--no-extensions"], { cwd: tempDir() });
        const lines = [
          { type: "bash", command: "true", id: "b" },
          { type: "prompt", message: "x", id: "p1" },
        ].map((r) => `${JSON.stringify(r)}\n`);
        if (chunking === "one chunk") agent.sendRaw(lines.join(""));
        else for (const line of lines) agent.sendRaw(line);
        expect(await agent.response("b", CEILING_MS)).toMatchObject({ success: true });
        expect(await agent.response("p1", CEILING_MS)).toMatchObject({ success: true });
        await agent.waitFor((r: Rec) => r.type === "agent_settled", CEILING_MS);
        // Never starved: state is answered, and the bash output reached the context.
        const state = await agent.request({ type: "get_state" }, CEILING_MS);
        expect(state["data"]).toMatchObject({ isStreaming: false });
        const messages = (await agent.request({ type: "get_messages" }, CEILING_MS))["data"] as { messages: { role: string }[] };
        expect(messages.messages.map((m) => m.role)).toContain("bashExecution");
        agent.closeInput();
        expect((await agent.exited).code).toBe(0);
      },
      2 * CEILING_MS,
    );
  }

  it(
    "SIGTERM is heard while a prompt waits behind a bash command",
    async () => {
      const agent = procs.parley(["--model-script", writeScript(["x"]), "--no-extensions"], { cwd: tempDir() });
      agent.sendRaw(`${JSON.stringify({ type: "bash", command: "true" })}\n${JSON.stringify({ type: "prompt", message: "x", id: "p" })}\n`);
      await agent.response("p", CEILING_MS);
      agent.child.kill("SIGTERM");
      expect((await agent.exited).code).toBe(143);
    },
    2 * CEILING_MS,
  );
});

describe("interleaving model (fast-check over the spawned CLI)", () => {
  it(
    "every id answered once, get_state always answered, the run settles, EOF exits 0",
    async () => {
      const { checkInterleavings } = await load();
      const seed = process.env["INTERLEAVE_SEED"] !== undefined ? Number(process.env["INTERLEAVE_SEED"]) : undefined;
      const report = await checkInterleavings({ runs: 5, maxCommands: 10, ...(seed !== undefined ? { seed } : {}) });
      expect(
        report,
        report
          ? `replay with INTERLEAVE_SEED=${report.seed}\n${JSON.stringify(report.scenario)}\n${report.failures.join("\n")}\nstderr:\n${report.stderr}`
          : "",
      ).toBeUndefined();
    },
    10 * CEILING_MS,
  );
});
