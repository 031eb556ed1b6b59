/**
 * No child process outlives parley even when parley is killed with SIGKILL, which runs none of
 * its exit handlers: the watchdog (src/child-watchdog.ts) ends them. Every way parley starts a
 * process leaves a long `sleep` behind that records its pid: the model's bash tool, the `bash`
 * command (a background job, one that clears its environment, a `setsid` child, and one whose
 * parent has exited so that init adopted it), an extension's `pi.exec`, and an `!command` API
 * key lookup in auth.json.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { alive, poll } from "./helpers/marker.js";
import type { AgentProcess } from "./helpers/spawn.js";
import { call, processRegistry, tempDir, writeScript } from "./fixtures/agent/harness.js";

const procs = processRegistry();
const CEILING_MS = 60_000;

/** Shell text that starts `command` in the background and records its pid in `dir/name.pid`. */
const recordPid = (dir: string, name: string, command = "sleep 3600") =>
  `${command} & echo $! > ${dir}/${name}.pid.tmp && mv ${dir}/${name}.pid.tmp ${dir}/${name}.pid`;

// The sleeps last an hour, so that only the watchdog can end them within a test's ceiling; should
// a test fail, they are ended here.
const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // ended, as it should be
    }
  }
});

async function pidOf(dir: string, name: string): Promise<number> {
  const file = join(dir, `${name}.pid`);
  await poll(() => existsSync(file), `${name}'s pid file`);
  const pid = Number(readFileSync(file, "utf8").trim());
  started.push(pid);
  return pid;
}

/** The pids of running watchdogs of the parley with this pid (its tag starts with the pid). */
function watchdogsOf(parleyPid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || !alive(Number(entry))) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (argv.includes("parley-watchdog") && argv.some((a) => a.startsWith(`${parleyPid}-`))) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The command line of `pid`'s parent ("" once it cannot be read). */
function parentCommand(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const ppid = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1];
    return readFileSync(`/proc/${ppid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

async function killedAndReaped(agent: AgentProcess, pids: Record<string, number>): Promise<void> {
  for (const [name, pid] of Object.entries(pids)) expect(alive(pid), `${name} (${pid}) runs before the SIGKILL`).toBe(true);
  agent.child.kill("SIGKILL");
  expect((await agent.exited).signal).toBe("SIGKILL");
  for (const [name, pid] of Object.entries(pids)) await poll(() => !alive(pid), `${name} (${pid}) to end after parley's SIGKILL`, CEILING_MS);
}

const EXEC_EXTENSION = `
export default function (pi) {
  pi.registerCommand("exec-sleep", {
    handler: async () => {
      const dir = process.env.WATCHDOG_TEST_DIR;
      await pi.exec("sh", ["-c", \`sleep 3600 & echo $! > \${dir}/exec.pid.tmp && mv \${dir}/exec.pid.tmp \${dir}/exec.pid; wait\`]);
    },
  });
}
`;

describe("parley killed with SIGKILL: the watchdog ends every child", () => {
  it(
    "bash tool, bash command (background, no environment, setsid, adopted by init), pi.exec",
    async () => {
      const dir = tempDir();
      const extension = join(dir, "exec-sleep.js");
      writeFileSync(extension, EXEC_EXTENSION);
      const script = writeScript([call("bash", { command: `${recordPid(dir, "tool")}; wait` }), "done"]);
      const agent = procs.parley(["--model-script", script, "--no-extensions", "-e", extension], { cwd: dir, env: { WATCHDOG_TEST_DIR: dir } });
      expect(watchdogsOf(agent.child.pid ?? 0), "no watchdog before anything was spawned").toEqual([]);
      // The orphan: sh exits at once, so init adopts the setsid sleep (no parent link leads to it).
      // untagged: clears its environment, so only the group parley told the watchdog about finds it.
      const command = [
        recordPid(dir, "background"),
        recordPid(dir, "untagged", "env -i sleep 3600"),
        recordPid(dir, "setsid", "setsid sleep 3600"),
        `sh -c '${recordPid(dir, "orphan", "setsid sleep 3600")}'`,
        "wait",
      ].join("; ");
      agent.send({ type: "bash", command, id: "b" });
      const pids: Record<string, number> = {};
      for (const name of ["background", "untagged", "setsid", "orphan"]) pids[name] = await pidOf(dir, name);
      await poll(() => !parentCommand(pids["orphan"] ?? 0).includes("orphan.pid"), "the orphan's parent sh to exit");
      expect((await agent.request({ type: "prompt", message: "run it" }, CEILING_MS))["success"]).toBe(true);
      pids["tool"] = await pidOf(dir, "tool");
      agent.send({ type: "prompt", message: "/exec-sleep", id: "x" });
      pids["exec"] = await pidOf(dir, "exec");
      const watchdogs = watchdogsOf(agent.child.pid ?? 0);
      expect(watchdogs).toHaveLength(1);
      await killedAndReaped(agent, pids);
      // Its work done, the watchdog does not outlive parley either.
      await poll(() => watchdogs.every((pid) => !alive(pid)), "the watchdog to exit", CEILING_MS);
    },
    3 * CEILING_MS,
  );

  it(
    "an !command API key lookup in auth.json that leaves a process behind",
    async () => {
      const dir = tempDir();
      const agentDir = join(dir, "agent");
      mkdirSync(agentDir);
      writeFileSync(
        join(agentDir, "auth.json"),
        JSON.stringify({ anthropic: { type: "api_key", key: `!${recordPid(dir, "key", "sleep 3600 >/dev/null 2>&1")}; echo sk-ant-stand-in` } }),
      );
      const agent = procs.parley(["--no-extensions"], { cwd: dir, env: { PI_CODING_AGENT_DIR: agentDir } });
      expect((await agent.request({ type: "get_state" }, CEILING_MS))["success"]).toBe(true);
      await killedAndReaped(agent, { key: await pidOf(dir, "key") });
    },
    3 * CEILING_MS,
  );

  it(
    "no watchdog while nothing was spawned; after a normal exit it is gone too",
    async () => {
      const dir = tempDir();
      const agent = procs.parley(["--no-extensions"], { cwd: dir });
      const pid = agent.child.pid ?? 0;
      expect((await agent.request({ type: "get_state" }, CEILING_MS))["success"]).toBe(true);
      expect(watchdogsOf(pid)).toEqual([]);
      expect((await agent.request({ type: "bash", command: "true" }, CEILING_MS))["success"]).toBe(true);
      const watchdogs = watchdogsOf(pid);
      expect(watchdogs).toHaveLength(1);
      agent.closeInput();
      expect((await agent.exited).code).toBe(0);
      await poll(() => watchdogs.every((w) => !alive(w)), "the watchdog to exit with parley", CEILING_MS);
    },
    3 * CEILING_MS,
  );
});
