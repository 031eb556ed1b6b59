// Embedding parley with @parley/client: docs/sdk.md's example, type-checked by `npm test` and run
// by packages/client/test/pack.e2e.test.ts in a project outside this repository. Run it from a
// project where `npm install @parley/client @parley/agent` put the `parley` binary in node_modules/.bin.
import { RpcClient, spawnTransport } from "@parley/client";

const client = new RpcClient(spawnTransport("./node_modules/.bin/parley", ["--mode", "rpc", "--no-session"]));
client.ui.handle("confirm", async (_request, signal) => !signal.aborted); // extension dialogs; unhandled ones are cancelled

// One run's events, streamed; the loop ends once the agent has settled (tool calls, retries included).
const run = client.stream("What's in package.json?");
for await (const event of run) {
  if (event.type === "tool_execution_start") console.log(`\n[${event.toolName}]`);
  if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") process.stdout.write(event.assistantMessageEvent.delta);
}
const { messages } = await run.result; // every message of the run: prompt, tool calls and results, replies

// Or just await the reply; an AbortSignal stops the agent (there is no default timeout).
const { text } = await client.run("list files", { signal: AbortSignal.timeout(120_000) });
console.log(`\n${messages.length} messages; then: ${text}`);
await client.close(); // stdin EOF: the agent shuts down and exits
