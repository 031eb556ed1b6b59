/**
 * A big session read through the spawned CLI (loading, appending and cursors are tested in
 * process in session-scale.test.ts).
 */
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sessionText } from "./helpers/session-text.js";
import { PARLEY_BIN, spawnAgent } from "./helpers/spawn.js";

const dir = mkdtempSync(path.join(tmpdir(), "parley-session-scale-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("get_messages of a big session through the CLI", () => {
  it("answers with every message, exactly as in the file, made piece by piece; a command sent right after is answered after it", async () => {
    // ~13 MB of messages: a dozen pieces, several waits for the pipe.
    const lines = sessionText(dir, 8000, 1500);
    const file = path.join(dir, "wire.jsonl");
    writeFileSync(file, `${lines.join("\n")}\n`);
    const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--session", file], { cwd: dir });
    try {
      await agent.request({ type: "get_state" });
      agent.send({ type: "get_messages", id: "all" });
      agent.send({ type: "get_state", id: "after" });
      const after = await agent.response("after");
      const all = await agent.response("all");
      expect(agent.records.indexOf(all)).toBeLessThan(agent.records.indexOf(after));
      const fromFile = lines.slice(1).map((line) => (JSON.parse(line) as { message: unknown }).message);
      expect((all["data"] as { messages: unknown[] }).messages).toEqual(fromFile);
      // The first answer sent the file's own bytes of the messages; the next one serialises them: the same.
      const again = await agent.request({ type: "get_messages" });
      expect((again["data"] as { messages: unknown[] }).messages).toEqual(fromFile);
      expect(agent.garbage).toEqual([]);
      // Appends only: the file is as it was, and then the thinking level the session goes on
      // with (it recorded none), as pi records it.
      const now = readFileSync(file, "utf8");
      expect(now.startsWith(`${lines.join("\n")}\n`)).toBe(true);
      expect(
        now
          .slice(`${lines.join("\n")}\n`.length)
          .trim()
          .split("\n")
          .map((l) => (JSON.parse(l) as { type: string }).type),
      ).toEqual(["thinking_level_change"]);
    } finally {
      agent.closeInput();
      await agent.exited;
    }
  });
});

describe("resuming a big session through the CLI", () => {
  it("loads it without growing V8's young generation (everything loaded lives on), which grows again afterwards", async () => {
    // ~40 MB of messages: left to itself, the young generation grows to tens of MiB on the way.
    const lines = sessionText(dir, 20_000, 2000);
    const file = path.join(dir, "held.jsonl");
    writeFileSync(file, `${lines.join("\n")}\n`);
    const extension = path.join(dir, "young-generation.mjs");
    writeFileSync(
      extension,
      `import { getHeapSpaceStatistics } from "node:v8";
      const young = () => getHeapSpaceStatistics().find((s) => s.space_name === "new_space").physical_space_size;
      export default function (pi) {
        pi.on("session_start", (_event, ctx) => ctx.ui.notify("young " + young(), "info"));
        pi.registerCommand("burst", {
          handler: async (_args, ctx) => {
            // Long-lived objects after the load: the young generation may grow again.
            const kept = [];
            for (let i = 0; i < 60000; i++) kept.push({ i, text: "z".repeat(1000) + i });
            ctx.ui.notify("young " + young() + " " + kept.length, "info");
          },
        });
      }`,
    );
    const notified = (from: number) => agent.waitFor((r) => r.type === "extension_ui_request" && String(r["message"]).startsWith("young "), undefined, from);
    const size = (record: Record<string, unknown>): number => Number(String(record["message"]).split(" ")[1]);
    const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--session", file, "-e", extension], { cwd: dir });
    try {
      const loaded = await notified(0);
      const state = await agent.request({ type: "get_state" });
      expect((state["data"] as { messageCount: number }).messageCount).toBe(20_000);
      // ~8 MiB here with the hold, ~66 MiB without it.
      expect(size(loaded)).toBeLessThan(16 * 2 ** 20);
      const from = agent.records.length;
      agent.send({ type: "prompt", message: "/burst" });
      expect(size(await notified(from))).toBeGreaterThan(size(loaded));
      expect(agent.garbage).toEqual([]);
    } finally {
      agent.closeInput();
      await agent.exited;
    }
  });
});
