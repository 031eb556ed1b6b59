/**
 * A transport over a WebSocket, for `parley --mode web` (or any server that carries one protocol
 * record per WebSocket message). Uses the given WebSocket class, else the global one (browsers,
 * newer Node). No Node API here: the browser entry exports this class as it is; the Node entry's
 * (websocket-node.ts) falls back to the `ws` package where there is no global WebSocket.
 *
 *   const client = new RpcClient(webSocketTransport("ws://127.0.0.1:4781/ws?token=…"));
 */
import { ProtocolError, type CloseInfo } from "./errors.js";
import { TransportBase } from "./transport.js";

/** What the transport uses of a WebSocket: the browser API, which `ws` implements too. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "open", listener: () => void): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: "close", listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: "error", listener: (event: unknown) => void): void;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface WebSocketTransportOptions {
  /** The WebSocket class to use (default: the global one; under Node without one, the `ws` package's). */
  WebSocket?: WebSocketConstructor;
}

const OPEN = 1;

export class WebSocketTransport extends TransportBase {
  #socket: WebSocketLike | undefined;
  /** Records sent before the socket opened, in order. */
  #queued: string[] = [];
  #closing = false;

  constructor(url: string, options: WebSocketTransportOptions = {}) {
    super();
    const given = options.WebSocket ?? globalWebSocket();
    if (given) {
      this.#attach(new given(url));
      return;
    }
    const fallback = this.loadWebSocket();
    if (fallback === undefined) {
      this.markClosed({ reason: "error", error: new Error("There is no WebSocket class here: pass one as options.WebSocket") });
      return;
    }
    fallback.then(
      (constructor) => {
        if (!this.isClosed) this.#attach(new constructor(url));
      },
      (error: unknown) => this.markClosed({ reason: "error", error: error instanceof Error ? error : new Error(String(error)) }),
    );
  }

  /** Where there is no global WebSocket and none was given: a class to load, or undefined (none). */
  protected loadWebSocket(): Promise<WebSocketConstructor> | undefined {
    return undefined;
  }

  protected writeLine(line: string): void {
    // One record per message: the line without its LF.
    const text = line.endsWith("\n") ? line.slice(0, -1) : line;
    if (this.#socket?.readyState === OPEN) this.#socket.send(text);
    else this.#queued.push(text);
  }

  close(): Promise<void> {
    this.#closing = true;
    if (this.#socket) this.#socket.close(1000, "client closed");
    else this.markClosed({ reason: "local" });
    return this.closed.then(() => undefined);
  }

  #attach(socket: WebSocketLike): void {
    this.#socket = socket;
    if (this.#closing) socket.close(1000, "client closed");
    let failure: Error | undefined;
    socket.addEventListener("open", () => {
      for (const text of this.#queued) socket.send(text);
      this.#queued = [];
      this.markOpen();
    });
    socket.addEventListener("message", (event) => {
      if (typeof event.data === "string") this.receiveLine(event.data);
      else this.reportProtocolError(new ProtocolError("The agent sent a binary WebSocket message; records are text"));
    });
    socket.addEventListener("error", (event) => {
      const message = typeof event === "object" && event !== null && "message" in event ? String((event as { message: unknown }).message) : "WebSocket error";
      failure ??= new Error(message);
    });
    socket.addEventListener("close", (event) => {
      const info: CloseInfo = this.#closing
        ? { reason: "local" }
        : failure
          ? { reason: "error", error: new Error(`${failure.message} (close code ${event.code})`) }
          : { reason: "remote" };
      this.markClosed(info);
    });
  }
}

export function webSocketTransport(url: string, options?: WebSocketTransportOptions): WebSocketTransport {
  return new WebSocketTransport(url, options);
}

function globalWebSocket(): WebSocketConstructor | undefined {
  const candidate = (globalThis as { WebSocket?: unknown }).WebSocket;
  return typeof candidate === "function" ? (candidate as WebSocketConstructor) : undefined;
}
