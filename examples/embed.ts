// Embedding parley (or pi) with @parley/client: the README's example, type-checked in CI.
// Run from the repository root after `npm ci`.
import { RpcClient, UiStore, spawnTransport } from "@parley/client";

const client = new RpcClient(spawnTransport("./node_modules/.bin/parley", ["--mode", "rpc", "--no-session", "-e", "examples/extensions/rpc-demo.ts"]));
client.ui.handle("select", (request) => request.options[1]); // answer a dialog; undefined cancels it
client.ui.handle("confirm", async (_request, signal) => !signal.aborted); // signal: timed out or dismissed
client.on("message_update", ({ assistantMessageEvent: e }) => e.type === "text_delta" && process.stdout.write(e.delta));
const store = await UiStore.attach(client); // statuses, widgets, title, notifications: kept up to date
await client.prompt("/demo-select"); // a /command resolves once it has finished
console.log(store.state.notifications.at(-1)?.message, (await client.getState()).sessionId);
await client.close(); // stdin EOF: the agent shuts down and exits
