/**
 * @parley/client for browsers (the `browser` export condition, or `@parley/client/browser`): the
 * client over any Transport, and a WebSocket transport, with no Node API anywhere in its imports.
 *
 *   const client = new RpcClient(webSocketTransport(`ws://${location.host}/ws?token=…`));
 *   onEvents(client, { message_update: (event) => …, … });
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
export {
  WebSocketTransport,
  webSocketTransport,
  type WebSocketConstructor,
  type WebSocketLike,
  type WebSocketTransportOptions,
} from "./websocket.js";
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
