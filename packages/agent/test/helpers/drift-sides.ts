/**
 * pi 1.6 and parley side by side on the scripted model of fixtures/pi16-drifts.ts, each in RPC
 * mode, offline and without provider keys, in a private world of its own: the set-up the tests
 * that compare the two there share (pi16-drifts, pi16-refusals, system-messages).
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll } from "vitest";
import { type Side, startSide } from "./newest-pi.js";
import { agentWorld, type AgentWorld } from "./offline-agents.js";
import { closedAfterEach, NO_KEYS } from "./pi-home.js";
import { type AgentProcess, type Rec, ROOT } from "./spawn.js";

export const DRIFTS_FIXTURE = join(ROOT, "packages/agent/test/fixtures/pi16-drifts.ts");
/** The fixture's scripted model. */
export const DRIFTS_MODEL = ["--provider", "drifts", "--model", "scripted"];

export interface DriftSides {
  /** A fresh private world for `side` (removed after the file's tests), with `settings` as its settings.json when given. */
  world(side: Side, settings?: object): AgentWorld;
  /** `side` in RPC mode with the fixture loaded and `args` after it, in `w`; closed after each test. */
  start(side: Side, w: AgentWorld, args: string[], env?: NodeJS.ProcessEnv): AgentProcess;
}

/** The worlds and agents of one test file, their folders named `<prefix><side>-…`. Call it at the file's top level (it registers the clean-up). */
export function driftSides(prefix: string): DriftSides {
  const running = closedAfterEach();
  const worlds: AgentWorld[] = [];
  afterAll(() => {
    for (const w of worlds) rmSync(w.base, { recursive: true, force: true });
  });
  return {
    world(side, settings) {
      const w = agentWorld(`${prefix}${side}-`);
      worlds.push(w);
      if (settings) writeFileSync(join(w.agentDir, "settings.json"), JSON.stringify(settings));
      return w;
    },
    start(side, w, args, env = {}) {
      const p = startSide(side, ["--mode", "rpc", "-e", DRIFTS_FIXTURE, ...args], {
        cwd: w.cwd,
        env: { ...NO_KEYS, ...w.env, PI_OFFLINE: "1", NO_COLOR: "1", ...env },
      });
      running.push(p);
      return p;
    },
  };
}

/** A response's data (an empty object when it has none). */
export const data = (r: Rec): Record<string, unknown> => (r["data"] ?? {}) as Record<string, unknown>;
