/**
 * An extension in a synchronous infinite loop holds parley's main thread (issue 34, item 3):
 * SIGTERM (or SIGINT) and the end of stdin must still end the process, and the shell command
 * parley started before the loop must die with it (stuck-watchdog.ts). The loop is in a command's
 * handler, a `tool_call` hook, or the extension's load-time code; in rpc and acp modes. Every wait
 * is for an event (the loop's marker file, the exit), with a generous ceiling.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { alive, poll } from "./helpers/marker.js";
import { deadline } from "./helpers/deadline.js";
import { PARLEY_BIN, type AgentProcess } from "./helpers/spawn.js";
import { call, processRegistry, tempDir, writeScript } from "./fixtures/agent/harness.js";

const STUCK = join(import.meta.dirname, "fixtures/stuck-main.ts");
const CEILING_MS = deadline(60_000);
const procs = processRegistry();

/** A shell command that backgrounds `sleep 1000` in its group, records its pid and waits for it. */
function sleeper(dir: string): { command: string; pid: () => Promise<number> } {
  const file = join(dir, "sleep.pid");
  return {
    command: `sleep 1000 & echo $! > ${file}.tmp && mv ${file}.tmp ${file}; wait`,
    pid: async () => {
      await poll(() => existsSync(file), "the sleep's pid file");
      return Number(readFileSync(file, "utf8").trim());
    },
  };
}

const spinning = (dir: string) => poll(() => existsSync(join(dir, "spinning")), "the extension's loop to begin");

/** parley (rpc) with the looping extension; a `bash` command's sleep started, then the loop entered `where`. */
async function stuckRpc(where: "command" | "tool_call"): Promise<{ agent: AgentProcess; sleepPid: number }> {
  const dir = tempDir();
  const sleep = sleeper(dir);
  const script = writeScript([call("bash", { command: "echo #spin" }), "done"]);
  const agent = procs.parley(["--model-script", script, "--no-extensions", "-e", STUCK], { cwd: dir, env: { STUCK_FILE: join(dir, "spinning") } });
  agent.send({ type: "bash", command: sleep.command, id: "b" });
  const sleepPid = await sleep.pid();
  agent.send({ type: "prompt", message: where === "command" ? "/spin" : "run it", id: "p" });
  await spinning(dir);
  return { agent, sleepPid };
}

/** What every stuck parley must show once ended: killed, the sleep gone, one line saying why, stdout whole lines. */
async function expectEnded(agent: AgentProcess, sleepPid: number, after: string): Promise<void> {
  expect(await agent.exited, agent.stderr()).toEqual({ code: null, signal: "SIGKILL" });
  await poll(() => !alive(sleepPid), `the sleep ${sleepPid} to end`);
  expect(agent.stderr()).toMatch(new RegExp(`parley: main thread unresponsive for \\d+s after ${after}; exiting\\n`));
  expect(agent.garbage).toEqual([]);
}

describe("a main thread stuck in an extension's loop (rpc)", () => {
  for (const where of ["command", "tool_call"] as const) {
    it(
      `SIGTERM while a ${where === "command" ? "command handler" : "tool_call hook"} loops: parley ends and its bash child dies`,
      async () => {
        const { agent, sleepPid } = await stuckRpc(where);
        agent.child.kill("SIGTERM");
        await expectEnded(agent, sleepPid, "SIGTERM");
      },
      3 * CEILING_MS,
    );
  }

  it(
    "stdin closed while a command handler loops: parley ends and its bash child dies",
    async () => {
      const { agent, sleepPid } = await stuckRpc("command");
      agent.closeInput();
      await expectEnded(agent, sleepPid, "the end of stdin");
    },
    3 * CEILING_MS,
  );

  it(
    "SIGINT while a tool_call hook loops: parley ends and its bash child dies",
    async () => {
      const { agent, sleepPid } = await stuckRpc("tool_call");
      agent.child.kill("SIGINT");
      await expectEnded(agent, sleepPid, "SIGINT");
    },
    3 * CEILING_MS,
  );
});

/** parley in `mode` with the extension looping at load, after starting a sleep with pi.exec. */
async function stuckAtLoad(mode: "rpc" | "acp"): Promise<{ agent: ReturnType<typeof spawnRaw>; sleepPid: number }> {
  const dir = tempDir();
  const sleep = sleeper(dir);
  const agent = spawnRaw(["--mode", mode, "--no-session", "--no-extensions", "-e", STUCK], dir, {
    STUCK_AT: "load",
    STUCK_CHILD: sleep.command,
    STUCK_FILE: join(dir, "spinning"),
  });
  const sleepPid = await sleep.pid();
  await spinning(dir);
  return { agent, sleepPid };
}

/** parley with its stdout collected raw (a load-time loop leaves no client to talk to). */
function spawnRaw(args: string[], dir: string, env: Record<string, string>) {
  const home = mkdtempSync(join(tmpdir(), "parley-home-"));
  const child = spawn(PARLEY_BIN, args, {
    cwd: dir,
    env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent"), ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdin.on("error", () => {});
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

describe("a main thread stuck in an extension's load-time loop", () => {
  for (const mode of ["rpc", "acp"] as const) {
    for (const end of ["SIGTERM", "stdin closed"] as const) {
      it(
        `${mode}: ${end} ends parley and the child pi.exec started`,
        async () => {
          const { agent, sleepPid } = await stuckAtLoad(mode);
          try {
            if (end === "SIGTERM") agent.child.kill("SIGTERM");
            else agent.child.stdin.end();
            expect(await agent.exited, agent.stderr()).toEqual({ code: null, signal: "SIGKILL" });
            await poll(() => !alive(sleepPid), `the sleep ${sleepPid} to end`);
            const after = end === "SIGTERM" ? "SIGTERM" : "the end of stdin";
            expect(agent.stderr()).toContain(`after ${after}; exiting\n`);
            // Nothing was said on stdout (no partial line either).
            expect(agent.stdout()).toBe("");
          } finally {
            agent.child.kill("SIGKILL");
          }
        },
        3 * CEILING_MS,
      );
    }
  }
});

// `npm run fuzz -- --stuck-main` (and the whole fuzz run): every signal parley handles and stdin
// EOF, against a loop in a command handler and in a tool_call hook, STUCK_MAIN_ROUNDS times.
const ROUNDS = Number(process.env["STUCK_MAIN_ROUNDS"] ?? "0");
if (ROUNDS > 0) {
  describe("stuck main thread, every way to end it (fuzz)", () => {
    const ends = ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "stdin closed"] as const;
    for (let round = 1; round <= ROUNDS; round++) {
      for (const where of ["command", "tool_call"] as const) {
        for (const end of ends) {
          it(
            `round ${round}: ${end} while a ${where} loops`,
            async () => {
              const { agent, sleepPid } = await stuckRpc(where);
              if (end === "stdin closed") agent.closeInput();
              else agent.child.kill(end);
              await expectEnded(agent, sleepPid, end === "stdin closed" ? "the end of stdin" : end);
            },
            3 * CEILING_MS,
          );
        }
      }
    }
  });
}
