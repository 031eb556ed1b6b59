/**
 * The page's link to parley: one typed client (@parley/client's browser entry) per WebSocket.
 * When a socket closes, a new client is made after a pause that grows; each is handed to the page
 * before its socket opens (to subscribe, so nothing is missed) and again once open (to resync).
 */
import { ListenerError, RpcClient, webSocketTransport } from "@parley/client/browser";

export type ConnectionState = "connecting" | "open" | "closed" | "refused";

export interface ConnectionHandlers {
  /** A new client whose socket is opening: subscribe to its records here. */
  onClient(client: RpcClient): void;
  /** Its socket opened: the page resyncs. */
  onOpen(client: RpcClient): void;
  /** `refused`: parley is up but no longer takes this page's token (it restarted with a new one). */
  onState(state: ConnectionState): void;
}

export class Connection {
  readonly #url: string;
  readonly #handlers: ConnectionHandlers;
  #client: RpcClient;
  #retryMs = 250;

  constructor(url: string, handlers: ConnectionHandlers) {
    this.#url = url;
    this.#handlers = handlers;
    this.#client = this.#connect();
  }

  /** The client whose socket is open, or undefined while (re)connecting. */
  get client(): RpcClient | undefined {
    return this.#client.state === "open" ? this.#client : undefined;
  }

  #connect(): RpcClient {
    this.#handlers.onState("connecting");
    const client = new RpcClient(webSocketTransport(this.#url), { idPrefix: "page-" });
    // A page handler that throws is a bug to surface (as an uncaught error), as it was before the
    // client; lines that are not records are ignored, as the server never writes them.
    client.onError((error) => {
      if (error instanceof ListenerError)
        setTimeout(() => {
          throw error.cause;
        });
    });
    this.#handlers.onClient(client);
    client.ready.then(
      () => {
        this.#retryMs = 250;
        this.#handlers.onState("open");
        this.#handlers.onOpen(client);
      },
      () => {},
    );
    void client.closed.then(() => {
      const wait = this.#retryMs;
      this.#retryMs = Math.min(5000, this.#retryMs * 2);
      void this.#tokenRefused().then((refused) => {
        this.#handlers.onState(refused ? "refused" : "closed");
        // Still retried (slowly when refused): the same parley may take the token again.
        setTimeout(() => (this.#client = this.#connect()), refused ? 5000 : wait);
      });
    });
    return client;
  }

  /** A browser hides why a WebSocket failed: an HTTP request with the same token tells a refused token (401) from a parley that is down. */
  async #tokenRefused(): Promise<boolean> {
    const url = new URL(this.#url);
    url.protocol = url.protocol === "wss:" ? "https:" : "http:";
    url.pathname = "/app.css";
    try {
      return (await fetch(url, { method: "HEAD", cache: "no-store" })).status === 401;
    } catch {
      return false;
    }
  }
}
