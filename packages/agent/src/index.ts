/** Types for extension authors, and the server for embedding parley in-process. */
export type * from "./extensions/types.js";
export { RpcServer, type RpcServerOptions, type ExtensionSource } from "./modes/rpc/server.js";
export type { Transport, TransportSink } from "./core/transport.js";
export {
  inProcessTransportPair,
  InProcessAgentTransport,
  InProcessClientTransport,
  type InProcessTransportOptions,
  type InProcessTransportPair,
} from "./transport/in-process.js";
export { StdioTransport, type StdioTransportOptions } from "./transport/stdio.js";
export { claimStdin, type ClaimedStdin } from "./transport/claim-stdin.js";
export { loadExtension, discoverExtensions } from "./extensions/loader.js";
