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
export { RpcClient, type ConnectionState, type RpcClientOptions } from "./client.js";
export { CommandMethods, type BashOptions, type MessageOptions, type PromptOptions } from "./commands.js";
export { textOf, type RunEvent, type RunOptions, type RunResult, type RunStream } from "./runs.js";
export type { CommandInput, IssuedRequest, RequestOptions } from "./requests.js";
export {
  DialogDispatcher,
  type AnyPendingDialog,
  type DialogEnd,
  type DialogHandler,
  type DialogMethod,
  type DialogRequestOf,
  type DialogResult,
  type PendingDialog,
} from "./dialogs.js";
export { onEvents, type EventSource, type EventTable } from "./event-table.js";
export { UiStore, type UiChange, type UiStoreAttachOptions } from "./ui-store.js";
export { detectCapabilities, type Capabilities, type DetectedCapabilities } from "./capabilities.js";
export { TransportBase, type Transport } from "./transport.js";
export { StreamTransport, type StreamTransportOptions } from "./stream-transport.js";
export { ProcessTransport, spawnTransport, type ProcessCloseOptions, type SpawnTransportOptions } from "./spawn.js";
export { WebSocketTransport, webSocketTransport } from "./websocket-node.js";
export type { WebSocketConstructor, WebSocketLike, WebSocketTransportOptions } from "./websocket.js";
export { InMemoryTransport, createInMemoryTransportPair } from "./memory-transport.js";
export { DisposableStore, Emitter, toDisposable, type Disposable } from "@parley/protocol/disposable";
export type { AgentEventMap, AgentEventType, AgentRecord, ResponseRecord } from "./records.js";
export {
  ConnectionClosedError,
  DialogEndedError,
  DialogHandlerError,
  ListenerError,
  ParleyClientError,
  ProtocolError,
  RequestAbortedError,
  RequestTimeoutError,
  RpcError,
  type ClientErrorEvent,
  type CloseInfo,
  type DialogEndReason,
  type SignalName,
} from "./errors.js";
