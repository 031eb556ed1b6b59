/**
 * Your files when things go wrong, through the real CLI (issue 34, items 6–10): a kill in the
 * middle of a write or edit leaves the old content or the new, never a torn file.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { setImmediate } from "node:timers/promises";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentProcess } from "./helpers/spawn.js";
import { poll } from "./helpers/waits.js";
import { AGENT_FIXTURES, call, processRegistry, tempDir, writeScript } from "./fixtures/agent/harness.js";

const procs = processRegistry();

describe("write and edit killed mid-write", () => {
  // Big enough that the write takes a while, so the kill lands in it.
  const size = 64 * 1024 * 1024;

  it.each(["write", "edit"] as const)("%s: SIGKILL during the write leaves the old or the new content, the mode, and the link", async (tool) => {
    const cwd = tempDir();
    const target = join(cwd, "big.txt");
    const link = join(cwd, "link.txt");
    const old = `${"o".repeat(size - 4)}END\n`;
    writeFileSync(target, old);
    chmodSync(target, 0o640);
    symlinkSync("big.txt", link);
    const script = writeScript([call("big_write", { tool, path: "link.txt", size }), "done"]);
    const agent = procs.raw(["--mode", "rpc", "--no-session", "-e", join(AGENT_FIXTURES, "big-write.js"), "--model-script", script], { cwd });
    agent.send({ type: "prompt", message: "go" });
    await agent.waitFor((r) => r.type === "tool_execution_start" && r["toolName"] === tool);
    // Killed as soon as the write shows on disk: the file changed, or a file appeared beside it.
    const writing = () => statSync(target).size !== size || readdirSync(cwd).length > 2;
    while (!writing() && !agent.records.some((r) => r.type === "tool_execution_end" && r["toolName"] === tool)) await setImmediate();
    agent.child.kill("SIGKILL");
    await agent.exited;
    const after = readFileSync(target, "utf8");
    const expected = tool === "write" ? `${"n".repeat(size - 4)}NEW\n` : `${"o".repeat(size - 4)}NEW\n`;
    expect(after.length).toBe(size);
    expect(after === old || after === expected).toBe(true);
    expect(statSync(target).mode & 0o777).toBe(0o640);
    // Still a link to it: the new content went to the target, not over the link.
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });
});

describe("full tool outputs", () => {
  const bashCall = call("bash", { command: "seq 1 200000" });
  const fullOutput = async (agent: AgentProcess): Promise<string> => {
    const end = await agent.waitFor((r) => r.type === "tool_execution_end" && r["toolName"] === "bash");
    const path = (end["result"] as { details?: { fullOutputPath?: string } }).details?.fullOutputPath;
    expect(path).toBeTypeOf("string");
    return path as string;
  };
  const start = (env: NodeJS.ProcessEnv = {}) => {
    const cwd = tempDir();
    const tmp = join(cwd, "tmp");
    mkdirSync(tmp);
    const agent = procs.raw(["--mode", "rpc", "--no-session", "--model-script", writeScript([bashCall, "done"])], { cwd, env: { ...process.env, TMPDIR: tmp, ...env } });
    agent.send({ type: "prompt", message: "go" });
    return { agent, tmp };
  };

  it("are private (0600 in a 0700 folder of parley's own) and removed when parley exits", async () => {
    const { agent, tmp } = start();
    const path = await fullOutput(agent);
    expect(dirname(path)).not.toBe(tmp);
    expect(dirname(dirname(path))).toBe(tmp);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    expect(readFileSync(path, "utf8")).toContain("\n200000\n");
    await agent.waitFor((r) => r.type === "agent_end");
    agent.closeInput();
    expect((await agent.exited).code).toBe(0);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("are removed after a SIGKILL too (by the child watchdog)", async () => {
    const { agent, tmp } = start();
    await fullOutput(agent);
    agent.child.kill("SIGKILL");
    await agent.exited;
    await poll(() => readdirSync(tmp).length === 0, "the output folder removed");
  });

  it("stay when PARLEY_KEEP_OUTPUT_FILES=1", async () => {
    const { agent } = start({ PARLEY_KEEP_OUTPUT_FILES: "1" });
    const path = await fullOutput(agent);
    await agent.waitFor((r) => r.type === "agent_end");
    agent.closeInput();
    expect((await agent.exited).code).toBe(0);
    expect(readFileSync(path, "utf8")).toContain("\n200000\n");
  });
});
