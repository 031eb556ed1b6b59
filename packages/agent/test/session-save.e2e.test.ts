/**
 * A session file that cannot be written reaches the client, not only stderr: the first failure
 * of an episode is an `extension_error` record (event "session_save"); the agent goes on; when
 * writing works again, the entries that waited are appended and nothing already written changes.
 * The failure is made by replacing the session folder with a regular file (ENOTDIR), which fails
 * for root as for anyone (root ignores permissions).
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { messages, processRegistry, runPrompt, state, tempDir, writeScript } from "./fixtures/agent/harness.js";
import type { AgentProcess } from "./helpers/spawn.js";

const procs = processRegistry();
const CEILING_MS = 60_000;

const saveErrors = (agent: AgentProcess) => agent.records.filter((r) => r.type === "extension_error" && r["event"] === "session_save");

describe("a session save that fails", () => {
  it(
    "is told once per episode on the wire; the agent goes on; saving resumes by appending what waited",
    async () => {
      const cwd = tempDir();
      const folder = join(cwd, "sessions");
      const script = writeScript(["one", "two", "three", "four"]);
      const agent = procs.raw(["--mode", "rpc", "--session-dir", folder, "--model-script", script, "--no-extensions"], { cwd });
      await runPrompt(agent, "first", CEILING_MS);
      const file = (await state(agent))["sessionFile"] as string;
      const before = readFileSync(file);

      renameSync(folder, `${folder}.aside`);
      writeFileSync(folder, "not a folder\n");
      await runPrompt(agent, "second", CEILING_MS);
      const named = await agent.request({ type: "set_session_name", name: "unsaved for now" }, CEILING_MS);
      expect(named["success"], JSON.stringify(named)).toBe(true);
      await runPrompt(agent, "third", CEILING_MS);
      const told = saveErrors(agent);
      expect(told).toHaveLength(1);
      expect(told[0]).toMatchObject({ type: "extension_error", extensionPath: "<session>", event: "session_save" });
      expect(told[0]?.["error"]).toContain(file);
      expect(told[0]?.["error"]).toMatch(/ENOTDIR/);

      rmSync(folder);
      renameSync(`${folder}.aside`, folder);
      await runPrompt(agent, "fourth", CEILING_MS);
      expect(saveErrors(agent)).toHaveLength(1);
      // stderr is a pipe of its own: the line may come after the records.
      await agent.until(() => /saving to the session file .* works again/.test(agent.stderr()), CEILING_MS);
      const inMemory = await messages(agent);
      agent.closeInput();
      expect((await agent.exited).code).toBe(0);

      // Appends only: the bytes written before the failure are untouched, and the file holds it all.
      const after = readFileSync(file);
      expect(after.subarray(0, before.length).equals(before)).toBe(true);
      const again = procs.raw(["--mode", "rpc", "--session", file, "--no-extensions"], { cwd });
      expect(await messages(again)).toEqual(inMemory);
      expect((await state(again))["sessionName"]).toBe("unsaved for now");
    },
    3 * CEILING_MS,
  );
});
