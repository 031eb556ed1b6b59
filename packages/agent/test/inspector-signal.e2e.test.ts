/**
 * SIGUSR1 does not open Node's inspector (which would let anyone who can signal parley attach to
 * it on 127.0.0.1:9229 and run code): parley ignores it and goes on answering.
 */
import { describe, expect, it } from "vitest";
import { checkedAgents } from "./helpers/checked-agents.js";
import { spawnParley } from "./helpers/spawn.js";
import { tempDir, writeScript } from "./fixtures/agent/harness.js";

const agents = checkedAgents();

describe("SIGUSR1", () => {
  it("opens no inspector, and parley goes on answering", async () => {
    const agent = spawnParley(["--model-script", writeScript(["a reply"])], { cwd: tempDir() });
    agents.push(agent);
    expect(await agent.request({ type: "get_state" })).toMatchObject({ success: true });
    for (let i = 0; i < 3; i++) {
      agent.child.kill("SIGUSR1");
      // A command answered after the signal was handled: the signal arrived and was dealt with before it.
      expect(await agent.request({ type: "get_state" })).toMatchObject({ success: true });
    }
    // Node says on stderr when the inspector starts (or fails to, with the port taken).
    expect(agent.stderr()).not.toMatch(/Debugger listening|inspector/i);
    agent.closeInput();
    expect(await agent.exited).toMatchObject({ code: 0 });
  });
});
