/**
 * @parley/client: a typed client for parley and pi in RPC mode (`--mode rpc`).
 *
 *   const client = new RpcClient(spawnTransport("parley", ["--mode", "rpc"]));
 *   client.ui.handle("confirm", async (request, signal) => true);
 *   console.log(await client.getState());
 *
 * Browsers get `browser.ts` (the `browser` export condition, or `@parley/client/browser`): the same
 * client and a WebSocket transport, without the Node transports.
 */
// Everything the browser entry has (one list of the client's API), then what only Node can run;
// the Node WebSocket transport, which falls back to the `ws` package, shadows the browser one.
export * from "./browser.js";
export { StreamTransport, type StreamTransportOptions } from "./stream-transport.js";
export { ProcessTransport, spawnTransport, type ProcessCloseOptions, type SpawnTransportOptions } from "./spawn.js";
export { WebSocketTransport, webSocketTransport } from "./websocket-node.js";
export { InMemoryTransport, createInMemoryTransportPair } from "./memory-transport.js";
