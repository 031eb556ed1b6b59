// The README's ten-line embedding example, type-checked by `npm test` (examples/tsconfig.json);
// scripts/test/docs.test.ts checks that the README shows this code as it is here. The longer
// example, run against an installed parley, is embed.ts.
import { RpcClient, spawnTransport } from "@parley/client";

const client = new RpcClient(spawnTransport("./node_modules/.bin/parley", ["--mode", "rpc", "--no-session"]));
client.ui.handle("confirm", async (request) => request.title !== "Delete everything?"); // extension dialogs
for await (const event of client.stream("What's in package.json?")) {
  if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") process.stdout.write(event.assistantMessageEvent.delta);
}
const { text } = await client.run("list files", { signal: AbortSignal.timeout(120_000) });
console.log(`\n${text}`);
await client.close(); // stdin EOF: the agent shuts down and exits
