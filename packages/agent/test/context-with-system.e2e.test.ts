/**
 * The newest pi's context_with_system through the spawned CLI: handlers get the request's
 * transcript with the prompt and tool declarations as its leading system message, after the
 * context handlers, and what they return is what the model is sent.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AGENT_FIXTURES, notes, processRegistry, runPrompt, tempDir, textOf, type Msg } from "./fixtures/agent/harness.js";
import type { AgentProcess, Rec } from "./helpers/spawn.js";

const procs = processRegistry();
const MINUTE = 60_000;
const FIXTURE = join(AGENT_FIXTURES, "system-echo.js");

function start(mode: string): AgentProcess {
  const args = ["--mode", "rpc", "--no-session", "-e", FIXTURE, "--model", "sys-echo/echo", "--tools", "read,bash", "--system-prompt", "You are terse."];
  return procs.raw(args, { cwd: tempDir(), env: { ...process.env, SYSTEM_MODE: mode, PI_CODING_AGENT_DIR: tempDir("parley-agent-dir-") } });
}

/** What the model was sent, as the echo model answered it. */
async function sent(agent: AgentProcess): Promise<{ systemPrompt: string; tools: string[]; roles: string[] }> {
  const run = await runPrompt(agent, "hello", MINUTE);
  const end = run.find((r) => r.type === "message_end" && (r["message"] as Msg).role === "assistant");
  return JSON.parse(textOf(end?.["message"])) as { systemPrompt: string; tools: string[]; roles: string[] };
}

async function report(agent: AgentProcess): Promise<{ order: string[]; seen: Rec[][] }> {
  const from = agent.records.length;
  await agent.request({ type: "prompt", message: "/system-report" }, MINUTE);
  return JSON.parse(notes(agent, from)[0] as string) as { order: string[]; seen: Rec[][] };
}

describe("context_with_system (newest pi)", () => {
  it("runs after the context handlers with the prompt and tool declarations as the leading system message; unchanged, the request is as without it", async () => {
    const agent = start("observe");
    const request = await sent(agent);
    expect(request.systemPrompt.startsWith("You are terse.")).toBe(true);
    expect(request.tools).toEqual(["read", "bash"]);
    expect(request.roles).toEqual(["user"]);
    const { order, seen } = await report(agent);
    expect(order).toEqual(["context", "context_with_system"]);
    expect(seen).toEqual([[{ role: "system", content: "You are terse.", toolsAdded: ["read", "bash"] }, { role: "user" }]]);
    expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([]);
  });

  it("a later system message a handler adds is sent: its text and sections join the prompt, its removed tools are not declared", async () => {
    const agent = start("patch");
    const request = await sent(agent);
    expect(request.systemPrompt.startsWith("You are terse.")).toBe(true);
    expect(request.systemPrompt.endsWith("\n\nExtra rule.\n\n<style>terse</style>")).toBe(true);
    expect(request.tools).toEqual(["read"]);
    expect(request.roles).toEqual(["user"]);
    expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([]);
  });

  it("dropping the leading system message is reported in pi's words and honoured: no prompt, no tools", async () => {
    const agent = start("drop");
    const request = await sent(agent);
    expect(request).toEqual({ systemPrompt: "", tools: [], roles: ["user"] });
    expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([
      {
        type: "extension_error",
        extensionPath: FIXTURE,
        event: "context_with_system",
        error:
          "Handler removed the leading system message; the request has no prompt or initial tool declarations. Keep it at index 0 or replace a dropped prefix with getCurrentSystemMessage().",
      },
    ]);
  });
});
