/**
 * No child process outlives parley (issue 14, items 4 and 6). A shell command, run by the model
 * (the bash tool) or by the client (the `bash` command), starts a marker `sleep` in its process
 * group and writes its pid to a file; parley then ends by each path (stdin EOF, the stdout reader
 * going away, SIGTERM, SIGINT) and the marker must be gone. The reader going away is noticed
 * while nothing is written, for a socket (Node's "pipe") and for a real pipe.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { attachJsonlReader } from "@parley/protocol";
import { startAcp, type AcpHarness } from "./helpers/acp-client.js";
import { alive, markerCommand, poll, SIGNAL_EXITS } from "./helpers/marker.js";
import { PARLEY_BIN, type AgentProcess } from "./helpers/spawn.js";
import { call, processRegistry, tempDir, writeScript } from "./fixtures/agent/harness.js";

const SIGNAL_IN_SHUTDOWN = join(import.meta.dirname, "fixtures/signal-in-shutdown.ts");

const procs = processRegistry();
const CEILING_MS = 60_000;

/** The pid of the `tail` that watches parley `pid`'s stdout pipe, if one runs. */
function watcherOf(pid: number): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (argv[0]?.endsWith("tail") && argv.includes(`--pid=${pid}`)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

type Runner = "tool" | "command";

/** Starts parley with the marker running under it, by the model's bash tool or the bash command. */
async function startWithMarker(runner: Runner): Promise<{ agent: AgentProcess; pid: number }> {
  const dir = tempDir();
  const marker = markerCommand(dir);
  const script = writeScript([call("bash", { command: marker.command }), "done"]);
  const agent = procs.parley(["--model-script", script, "--no-extensions"], { cwd: dir });
  if (runner === "tool") {
    const res = await agent.request({ type: "prompt", message: "run it" }, CEILING_MS);
    expect(res["success"]).toBe(true);
  } else {
    agent.send({ type: "bash", command: marker.command, id: "b" });
  }
  const pid = await marker.pid();
  expect(alive(pid)).toBe(true);
  return { agent, pid };
}

const paths = {
  eof: (agent: AgentProcess) => agent.closeInput(),
  "stdout reader gone": (agent: AgentProcess) => agent.child.stdout.destroy(),
  sigterm: (agent: AgentProcess) => agent.child.kill("SIGTERM"),
  sigint: (agent: AgentProcess) => agent.child.kill("SIGINT"),
  sighup: (agent: AgentProcess) => agent.child.kill("SIGHUP"),
  sigquit: (agent: AgentProcess) => agent.child.kill("SIGQUIT"),
} as const;
const expectedExit = { eof: 0, "stdout reader gone": 0, sigterm: 143, sigint: 130, sighup: 129, sigquit: 131 } as const;

describe("no child process outlives parley", () => {
  for (const runner of ["tool", "command"] as const) {
    for (const [path, end] of Object.entries(paths) as [keyof typeof paths, (a: AgentProcess) => void][]) {
      it(
        `${path}, while a ${runner === "tool" ? "bash tool call" : "bash command"} runs`,
        async () => {
          const { agent, pid } = await startWithMarker(runner);
          end(agent);
          const { code } = await agent.exited;
          expect(code, agent.stderr()).toBe(expectedExit[path]);
          await poll(() => !alive(pid), `the marker ${pid} to end`);
        },
        2 * CEILING_MS,
      );
    }
  }

  it(
    "a second SIGTERM while session_shutdown handlers run exits at once with 143, and the marker dies",
    async () => {
      const dir = tempDir();
      const marker = markerCommand(dir);
      const agent = procs.parley(["--no-extensions", "-e", SIGNAL_IN_SHUTDOWN], { cwd: dir });
      agent.send({ type: "bash", command: marker.command, id: "b" });
      const pid = await marker.pid();
      agent.child.kill("SIGTERM");
      expect(await agent.exited, agent.stderr()).toMatchObject({ code: 143 });
      await poll(() => !alive(pid), `the marker ${pid} to end`);
    },
    2 * CEILING_MS,
  );

  // Start-up may start children too (an extension's pi.exec while it loads, a package manager
  // asked for its global folder): a signal before parley serves ends them and exits with 128+n.
  for (const [signal, code] of SIGNAL_EXITS) {
    it(
      `${signal} while an extension's factory awaits pi.exec at start-up: exits ${code}, the marker dies`,
      async () => {
        const dir = tempDir();
        const marker = markerCommand(dir);
        const extension = join(dir, "exec-at-load.ts");
        writeFileSync(extension, `export default async (pi: any) => { await pi.exec("sh", ["-c", ${JSON.stringify(marker.command)}]); };\n`);
        const agent = procs.parley(["--no-extensions", "-e", extension], { cwd: dir });
        const pid = await marker.pid();
        agent.child.kill(signal);
        expect(await agent.exited, agent.stderr()).toEqual({ code, signal: null });
        await poll(() => !alive(pid), `the marker ${pid} to end`);
      },
      2 * CEILING_MS,
    );
  }

  it(
    "a bash command in flight answers cancelled on stdin EOF",
    async () => {
      const { agent } = await startWithMarker("command");
      agent.closeInput();
      expect(await agent.response("b", CEILING_MS)).toMatchObject({ success: true, data: { cancelled: true } });
      expect((await agent.exited).code).toBe(0);
    },
    2 * CEILING_MS,
  );
});

// A process group misses what made a session of its own (`setsid cmd &`, daemons): parley
// follows the parent links too, on every path that kills a shell command.
describe("a descendant that left the shell's process group dies too", () => {
  const ends = {
    abort_bash: (agent: AgentProcess) => agent.send({ type: "abort_bash", id: "ab" }),
    eof: (agent: AgentProcess) => agent.closeInput(),
    sigterm: (agent: AgentProcess) => agent.child.kill("SIGTERM"),
  } as const;
  for (const [name, end] of Object.entries(ends)) {
    it(
      `setsid sleep, ${name}`,
      async () => {
        const dir = tempDir();
        const file = join(dir, "escaped.pid");
        const agent = procs.parley(["--no-extensions"], { cwd: dir });
        agent.send({ type: "bash", command: `setsid sleep 29.5 & echo $! > ${file}.tmp && mv ${file}.tmp ${file}; wait`, id: "b" });
        await poll(() => existsSync(file), "the escaped sleep's pid file");
        const pid = Number(readFileSync(file, "utf8").trim());
        expect(alive(pid)).toBe(true);
        end(agent);
        if (name === "abort_bash") expect(await agent.response("b", CEILING_MS)).toMatchObject({ success: true, data: { cancelled: true } });
        await poll(() => !alive(pid), `the escaped sleep ${pid} to end`);
        if (name !== "abort_bash") await agent.exited;
      },
      2 * CEILING_MS,
    );
  }
});

describe("a closed stdout is noticed while nothing is written", () => {
  it(
    "socket (Node's stdio pipe): parley exits and the silent command's children die",
    async () => {
      const { agent, pid } = await startWithMarker("command");
      const t0 = Date.now();
      agent.child.stdout.destroy(); // stdin stays open: only the reader went away
      expect((await agent.exited).code).toBe(0);
      await poll(() => !alive(pid), `the marker ${pid} to end`);
      // Far below the command's 29.5 s (the bound is generous for a loaded machine).
      expect(Date.now() - t0).toBeLessThan(20_000);
    },
    2 * CEILING_MS,
  );

  it(
    "pipe (a shell pipeline whose reader exits): parley exits and the silent command's children die",
    async () => {
      const dir = tempDir();
      const marker = markerCommand(dir);
      // parley's stdout is a real pipe(2) into `head -n 1`, which exits after the first line.
      const shell = spawn("sh", ["-c", `"${PARLEY_BIN}" --mode rpc --no-session --no-extensions | head -n 1`], {
        cwd: dir,
        env: { ...process.env, HOME: dir },
        stdio: ["pipe", "pipe", "pipe"],
      });
      const lines: string[] = [];
      attachJsonlReader(shell.stdout, (line) => lines.push(line));
      const exited = new Promise<number | null>((resolve) => shell.on("exit", (code) => resolve(code)));
      try {
        shell.stdin.write(`${JSON.stringify({ type: "bash", command: marker.command, id: "b" })}\n`);
        const pid = await marker.pid();
        const t0 = Date.now();
        // The only line head reads; then the pipe has no reader and parley writes nothing more.
        shell.stdin.write(`${JSON.stringify({ type: "get_state", id: "s" })}\n`);
        // sh ends when the pipeline's last member (parley) has: stdin is still open.
        expect(await exited).toBe(0);
        expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({ id: "s", success: true });
        await poll(() => !alive(pid), `the marker ${pid} to end`);
        expect(Date.now() - t0).toBeLessThan(20_000);
      } finally {
        shell.kill("SIGKILL");
      }
    },
    2 * CEILING_MS,
  );

  it(
    "pipe: parley killed with SIGKILL still leaves its reader an EOF (the pipe watcher dies with it)",
    async () => {
      const dir = tempDir();
      const pidFile = join(dir, "parley.pid");
      // parley's stdout is a pipe(2) into cat; cat ends (and with it sh) only at EOF on that pipe.
      // (A background job's stdin would be /dev/null: fd 3 hands it ours.)
      const shell = spawn("sh", ["-c", `exec 3<&0; { "${PARLEY_BIN}" --mode rpc --no-session --no-extensions <&3 & echo $! > "${pidFile}"; wait; } | cat`], {
        cwd: dir,
        env: { ...process.env, HOME: dir },
        stdio: ["pipe", "pipe", "pipe"],
      });
      const lines: string[] = [];
      attachJsonlReader(shell.stdout, (line) => lines.push(line));
      const exited = new Promise<number | null>((resolve) => shell.on("exit", (code) => resolve(code)));
      try {
        shell.stdin.write(`${JSON.stringify({ type: "get_state", id: "s" })}\n`);
        await poll(() => lines.length > 0, "the first answer");
        await poll(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"), "parley's pid");
        const pid = Number(readFileSync(pidFile, "utf8").trim());
        // The watcher is up (a tail sharing the pipe), so this is the case that could hang.
        await poll(() => watcherOf(pid) !== undefined, "the pipe watcher");
        process.kill(pid, "SIGKILL");
        await exited; // without the fix, cat waits for ever: the watcher held the pipe open
      } finally {
        shell.kill("SIGKILL");
      }
    },
    2 * CEILING_MS,
  );
});

describe("ACP mode ends as RPC mode does (one process lifetime for every mode)", () => {
  const running: AcpHarness[] = [];
  afterEach(() => {
    for (const h of running.splice(0)) if (h.child.exitCode === null && h.child.signalCode === null) h.child.kill("SIGKILL");
  });

  /** `parley --mode acp` in a session whose prompt's bash tool call runs the marker (the turn runs on). */
  async function acpWithMarker(
    args: string[] = [],
  ): Promise<{ h: AcpHarness; pid: number; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> }> {
    const dir = tempDir();
    const marker = markerCommand(dir);
    const script = writeScript([call("bash", { command: marker.command }), "done"]);
    const h = await startAcp(["--model-script", script, "--no-extensions", "--no-session", ...args], { cwd: dir });
    running.push(h);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      h.child.once("exit", (code, signal) => resolve({ code, signal })),
    );
    const session = await h.agent.request("session/new", { cwd: dir, mcpServers: [] });
    // The turn runs until parley ends; its answer (if any) does not matter here.
    void h.agent.request("session/prompt", { sessionId: session.sessionId, prompt: [{ type: "text", text: "run it" }] }).catch(() => undefined);
    const pid = await marker.pid();
    expect(alive(pid)).toBe(true);
    return { h, pid, exited };
  }

  for (const [signal, code] of SIGNAL_EXITS) {
    it(
      `${signal} while a bash tool call runs: the marker dies and parley exits ${code}`,
      async () => {
        const { h, pid, exited } = await acpWithMarker();
        h.child.kill(signal);
        expect(await exited, h.stderr()).toEqual({ code, signal: null });
        await poll(() => !alive(pid), `the marker ${pid} to end`);
      },
      2 * CEILING_MS,
    );
  }

  it(
    "a second SIGTERM while session_shutdown handlers run exits at once with 143 (not killed by the signal), and the marker dies",
    async () => {
      const { h, pid, exited } = await acpWithMarker(["-e", SIGNAL_IN_SHUTDOWN]);
      h.child.kill("SIGTERM");
      expect(await exited, h.stderr()).toEqual({ code: 143, signal: null });
      await poll(() => !alive(pid), `the marker ${pid} to end`);
    },
    2 * CEILING_MS,
  );

  it(
    "the stdout reader going away while nothing is written: parley exits 0 and the marker dies",
    async () => {
      const { h, pid, exited } = await acpWithMarker();
      const t0 = Date.now();
      h.child.stdout.destroy(); // stdin stays open: only the reader went away
      expect(await exited, h.stderr()).toEqual({ code: 0, signal: null });
      await poll(() => !alive(pid), `the marker ${pid} to end`);
      // Far below the command's 29.5 s, after which a write would show the closed pipe anyway.
      expect(Date.now() - t0).toBeLessThan(20_000);
    },
    2 * CEILING_MS,
  );
});
