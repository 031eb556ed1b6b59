/** The agents a test file spawns, checked and ended after each test. */
import { afterEach, expect } from "vitest";
import type { AgentProcess } from "./spawn.js";

/**
 * A list to push each spawned agent onto: after every test, each must have written protocol
 * records only (nothing else on stdout), and is then killed.
 */
export function checkedAgents(): AgentProcess[] {
  const agents: AgentProcess[] = [];
  afterEach(() => {
    for (const a of agents.splice(0)) {
      expect(a.garbage).toEqual([]); // stdout carried protocol records only
      a.kill();
    }
  });
  return agents;
}
