/**
 * The `bash` command: streaming, exit codes, truncation, abort, concurrent commands, the user_bash hook,
 * and how the run reaches the next prompt's context.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Api, Model } from "@earendil-works/pi-ai/compat";
import { createAssistantMessageEventStream } from "@earendil-works/pi-ai/compat";
import { describe, expect, it } from "vitest";
import { sanitizeOutput } from "../src/agent/user-bash.js";
import { convertToLlm } from "../src/extensions/compat/messages.js";
import { serveScripted, type Factory } from "./helpers/in-process.js";
import { assistantReply } from "./helpers/replies.js";

type Rec = Record<string, unknown>;

async function serve(turns: unknown[], factories: Factory[] = [], env: NodeJS.ProcessEnv = {}) {
  const harness = await serveScripted(turns, factories, { env });
  const prompt = async (message: string): Promise<void> => {
    expect((await harness.prompt(message))["success"]).toBe(true);
  };
  const messages = async (): Promise<Rec[]> => ((await harness.request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages;
  return { ...harness, prompt, messages };
}

function captureContext(into: Rec[][]): Factory {
  return (pi) => {
    pi.on("context" as never, ((event: { messages: Rec[] }) => void into.push([...event.messages])) as never);
  };
}

const llmText = (messages: Rec[]): string[] =>
  convertToLlm(messages).map((m) => (typeof m.content === "string" ? m.content : m.content.map((c) => ("text" in c ? c.text : "")).join("")));

describe("bash (in-process)", () => {
  it("streams output as bash_execution_update with the command's id and answers with the result", async () => {
    const { dir, transport, request } = await serve([]);
    // stdout and stderr are two pipes: their lines interleave as they arrive, so only stdout's own order is fixed.
    const res = await request({ type: "bash", command: "echo one; echo two >&2; pwd" });
    expect(res).toMatchObject({ command: "bash", success: true, data: { exitCode: 0, cancelled: false, truncated: false } });
    const output = (res["data"] as { output: string }).output;
    expect(output.split("\n").sort()).toEqual(["", dir, "one", "two"].sort());
    expect(output.indexOf("one\n")).toBeLessThan(output.indexOf(`${dir}\n`));
    expect(res["data"]).not.toHaveProperty("fullOutputPath");
    // How many updates depends on how the output arrived; together they are the output.
    const updates = transport.of("bash_execution_update");
    expect(updates.length).toBeGreaterThanOrEqual(1);
    expect(updates.every((u) => u["id"] === res["id"])).toBe(true);
    expect(updates.map((u) => u["delta"]).join("")).toBe(output);
    // The updates come before the response.
    expect(transport.sent.indexOf(updates.at(-1)!)).toBeLessThan(transport.sent.indexOf(res));
  });

  it("reports exit codes, and an error for a missing working directory", async () => {
    const { dir, request } = await serve([]);
    expect((await request({ type: "bash", command: "echo out; exit 3" }))["data"]).toEqual({
      output: "out\n",
      exitCode: 3,
      cancelled: false,
      truncated: false,
    });
    expect((await request({ type: "bash", command: "true" }))["data"]).toEqual({ output: "", exitCode: 0, cancelled: false, truncated: false });
    rmSync(dir, { recursive: true, force: true });
    expect(await request({ type: "bash", command: "true" })).toMatchObject({
      success: false,
      error: expect.stringMatching(/Working directory does not exist/),
    });
  });

  it("keeps the tail of long output and saves the whole of it to fullOutputPath", async () => {
    const { transport, request } = await serve([]);
    const res = await request({ type: "bash", command: "seq 1 5000" });
    const data = res["data"] as { output: string; truncated: boolean; fullOutputPath: string; exitCode: number };
    expect(data.truncated).toBe(true);
    expect(data.exitCode).toBe(0);
    const lines = data.output.split("\n");
    // The last 2,000 lines, as pi 1.6 counts and keeps them (no empty line after the final newline).
    expect(lines[0]).toBe("3001");
    expect(lines).toHaveLength(2000);
    expect(data.output.endsWith("4999\n5000")).toBe(true);
    expect(data.fullOutputPath).toMatch(/parley-bash-[0-9a-f]+\.log$/);
    const full = readFileSync(data.fullOutputPath, "utf8");
    expect(full).toBe(`${Array.from({ length: 5000 }, (_, i) => i + 1).join("\n")}\n`);
    // All output streamed, even what the result leaves out.
    expect(
      transport
        .of("bash_execution_update")
        .map((u) => u["delta"])
        .join(""),
    ).toBe(full);
  });

  it("truncates by bytes too (50KB)", async () => {
    const { request } = await serve([]);
    const data = (await request({ type: "bash", command: "head -c 80000 /dev/zero | tr '\\0' 'a'; echo" }))["data"] as {
      output: string;
      truncated: boolean;
      fullOutputPath: string;
    };
    expect(data.truncated).toBe(true);
    expect(Buffer.byteLength(data.output)).toBeLessThanOrEqual(50 * 1024);
    expect(readFileSync(data.fullOutputPath, "utf8").length).toBe(80001);
  });

  it("strips terminal escapes and carriage returns", async () => {
    const { request } = await serve([]);
    const data = (await request({ type: "bash", command: "printf '\\033[31mred\\033[0m\\r\\nplain\\a\\n'" }))["data"] as { output: string };
    expect(data.output).toBe("red\nplain\n");
    expect(sanitizeOutput("\u001b]0;title\u0007ok\u001b[2K\r")).toBe("ok");
  });

  it("abort_bash kills the whole process group promptly", async () => {
    const { dir, send, response, request, transport, until } = await serve([]);
    const pidFile = join(dir, "pid");
    // An hour's sleep: only the abort can end the command within the test's ceiling.
    const id = send({ type: "bash", command: `sleep 3600 & echo $! > ${pidFile}; echo started; wait` });
    await until(() => transport.of("bash_execution_update").some((u) => u["id"] === id));
    const sleeper = Number(readFileSync(pidFile, "utf8"));
    expect((await request({ type: "abort_bash" }))["success"]).toBe(true);
    const res = await response(id);
    expect(res["data"]).toEqual({ output: "started\n", cancelled: true, truncated: false });
    // The shell's background child died with it (a zombie awaiting its reaper counts as dead).
    const alive = (): boolean => {
      try {
        process.kill(sleeper, 0);
      } catch {
        return false;
      }
      try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${sleeper}/stat`, "utf8"));
      } catch {
        return false;
      }
    };
    await until(() => !alive());
  });

  it("runs commands concurrently, as pi does; abort_bash cancels every one", async () => {
    const { send, response, request, transport, until } = await serve([]);
    const first = send({ type: "bash", command: "echo go; sleep 3600" });
    await until(() => transport.of("bash_execution_update").length > 0);
    expect((await request({ type: "bash", command: "echo again" }))["data"]).toMatchObject({ output: "again\n", exitCode: 0 });
    const second = send({ type: "bash", command: "echo go2; sleep 3600" });
    await until(() => transport.of("bash_execution_update").some((u) => u["id"] === second));
    await request({ type: "abort_bash" });
    expect((await response(first))["data"]).toMatchObject({ cancelled: true });
    expect((await response(second))["data"]).toMatchObject({ cancelled: true });
  });

  it("abort_bash with nothing running is a harmless no-op", async () => {
    const { request } = await serve([]);
    expect(await request({ type: "abort_bash" })).toMatchObject({ success: true });
  });

  it("records the run as a bashExecution message (no event) that the next prompt's context includes", async () => {
    const contexts: Rec[][] = [];
    const { transport, request, prompt, messages } = await serve(["ok"], [captureContext(contexts)]);
    const before = transport.sent.length;
    await request({ type: "bash", command: "echo hello" });
    expect(transport.sent.slice(before).map((r) => r["type"])).toEqual(["bash_execution_update", "response"]);
    const recorded = await messages();
    expect(recorded).toEqual([
      { role: "bashExecution", command: "echo hello", output: "hello\n", exitCode: 0, cancelled: false, truncated: false, timestamp: expect.any(Number) },
    ]);
    const entries = ((await request({ type: "get_entries" }))["data"] as { entries: Rec[] }).entries;
    expect(entries.at(-1)).toMatchObject({ type: "message", message: { role: "bashExecution", command: "echo hello" } });

    await prompt("what did it print?");
    const seen = contexts.at(-1)!;
    expect(seen.map((m) => m["role"])).toEqual(["bashExecution", "user"]);
    expect(llmText(seen)[0]).toBe("Ran `echo hello`\n```\nhello\n\n```");
  });

  it("excludeFromContext keeps the run in the session but out of the model's context", async () => {
    const contexts: Rec[][] = [];
    const { request, prompt, messages } = await serve(["ok"], [captureContext(contexts)]);
    await request({ type: "bash", command: "echo secret", excludeFromContext: true });
    expect((await messages())[0]).toMatchObject({ role: "bashExecution", command: "echo secret", excludeFromContext: true });
    await prompt("hi");
    const seen = contexts.at(-1)!;
    expect(llmText(seen)).toEqual(["hi"]);
  });

  it("a run that ends while the agent streams joins the context after the run", async () => {
    // The model's reply is held until the test lets it go: the bash run surely ends mid-stream.
    let release: (() => void) | undefined;
    const held: Factory = (pi) => {
      pi.registerProvider("held", {
        api: "held-api",
        models: [{ id: "m", contextWindow: 100_000 }],
        streamSimple: (model: Model<Api>) => {
          const stream = createAssistantMessageEventStream();
          release = () => stream.push({ type: "done", reason: "stop", message: assistantReply(model, { text: "the reply" }) });
          return stream;
        },
      } as never);
    };
    const { server, request, send, response, messages, until, transport } = await serve([], [held]);
    expect((await request({ type: "set_model", provider: "held", modelId: "m" }))["success"]).toBe(true);
    await request({ type: "prompt", message: "go" });
    const id = send({ type: "bash", command: "echo during" });
    await response(id);
    expect(((await request({ type: "get_state" }))["data"] as Rec)["isStreaming"]).toBe(true);
    expect((await messages()).map((m) => m["role"])).toEqual(["system", "user"]);
    await until(() => release !== undefined);
    release?.();
    await until(() => transport.of("agent_settled").length > 0);
    // It joins once the run is idle: wait for that, not for time.
    await until(() => server.agent.messages.length === 4);
    expect((await messages()).map((m) => m["role"])).toEqual(["system", "user", "assistant", "bashExecution"]);
  });

  it("user_bash handlers may replace the run with a result, or supply the operations", async () => {
    const events: Rec[] = [];
    const { dir, transport, request, messages } = await serve(
      [],
      [
        (pi) => {
          pi.on(
            "user_bash" as never,
            ((event: Rec) => {
              events.push(event);
              if (event["command"] === "fake") return { result: { output: "faked", exitCode: 7, cancelled: false, truncated: false } };
              if (event["command"] === "remote")
                return {
                  operations: {
                    exec: async (command: string, cwd: string, options: { onData: (d: Buffer) => void }) => {
                      options.onData(Buffer.from(`ran ${command} in ${cwd}\n`));
                      return { exitCode: 0 };
                    },
                  },
                };
              return undefined;
            }) as never,
          );
        },
      ],
    );
    const fake = await request({ type: "bash", command: "fake" });
    expect(fake["data"]).toEqual({ output: "faked", exitCode: 7, cancelled: false, truncated: false });
    expect(transport.of("bash_execution_update").at(-1)).toEqual({ type: "bash_execution_update", id: fake["id"], delta: "faked" });
    const remote = await request({ type: "bash", command: "remote", excludeFromContext: true });
    expect(remote["data"]).toMatchObject({ output: `ran remote in ${dir}\n`, exitCode: 0 });
    const real = await request({ type: "bash", command: "echo real" });
    expect(real["data"]).toMatchObject({ output: "real\n" });
    expect(events).toEqual([
      { type: "user_bash", command: "fake", excludeFromContext: false, cwd: dir },
      { type: "user_bash", command: "remote", excludeFromContext: true, cwd: dir },
      { type: "user_bash", command: "echo real", excludeFromContext: false, cwd: dir },
    ]);
    expect((await messages()).map((m) => [m["command"], m["output"]])).toEqual([
      ["fake", "faked"],
      ["remote", `ran remote in ${dir}\n`],
      ["echo real", "real\n"],
    ]);
  });
});

// ---- over real pipes --------------------------------------------------------------------------------
