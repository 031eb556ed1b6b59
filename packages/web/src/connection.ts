/**
 * The page's WebSocket to parley: one message is one protocol record. Reconnects by itself
 * (with a growing pause); each (re)connection starts with `onOpen`, where the page resyncs.
 */
export interface WireRecord {
  type: string;
  [key: string]: unknown;
}

export interface Response {
  type: "response";
  command: string;
  success: boolean;
  data?: unknown;
  error?: string;
  id?: string;
}

export interface ConnectionHandlers {
  onOpen(): void;
  onRecord(record: WireRecord): void;
  /** `refused`: parley is up but no longer takes this page's token (it restarted with a new one). */
  onState(state: "connecting" | "open" | "closed" | "refused"): void;
}

export function isWireRecord(value: unknown): value is WireRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value) && typeof (value as { type?: unknown }).type === "string";
}

function isResponse(record: WireRecord): record is WireRecord & Response {
  return record.type === "response" && typeof record["command"] === "string" && typeof record["success"] === "boolean";
}

export class Connection {
  readonly #url: string;
  readonly #handlers: ConnectionHandlers;
  #socket: WebSocket | undefined;
  #requests = new Map<string, (response: Response) => void>();
  #nextId = 0;
  #retryMs = 250;

  constructor(url: string, handlers: ConnectionHandlers) {
    this.#url = url;
    this.#handlers = handlers;
    this.#connect();
  }

  get open(): boolean {
    return this.#socket?.readyState === WebSocket.OPEN;
  }

  send(record: object): boolean {
    if (!this.#socket || this.#socket.readyState !== WebSocket.OPEN) return false;
    this.#socket.send(JSON.stringify(record));
    return true;
  }

  /** A command with an id of its own; resolves with its response (or a failure if the connection drops). */
  request(command: { type: string; [key: string]: unknown }): Promise<Response> {
    const id = `page-${++this.#nextId}`;
    return new Promise((resolve) => {
      if (!this.send({ ...command, id })) {
        resolve({ type: "response", command: command.type, success: false, error: "not connected to parley" });
        return;
      }
      this.#requests.set(id, resolve);
    });
  }

  #connect(): void {
    this.#handlers.onState("connecting");
    const socket = new WebSocket(this.#url);
    this.#socket = socket;
    socket.addEventListener("open", () => {
      this.#retryMs = 250;
      this.#handlers.onState("open");
      this.#handlers.onOpen();
    });
    socket.addEventListener("message", (event: MessageEvent<unknown>) => {
      if (typeof event.data !== "string") return;
      let value: unknown;
      try {
        value = JSON.parse(event.data);
      } catch {
        return;
      }
      if (!isWireRecord(value)) return;
      if (isResponse(value) && typeof value.id === "string") {
        const waiter = this.#requests.get(value.id);
        if (waiter) {
          this.#requests.delete(value.id);
          waiter(value);
          return;
        }
      }
      this.#handlers.onRecord(value);
    });
    socket.addEventListener("close", () => {
      if (this.#socket !== socket) return;
      this.#socket = undefined;
      for (const [id, waiter] of this.#requests) {
        this.#requests.delete(id);
        waiter({ type: "response", command: "", success: false, error: "the connection to parley closed" });
      }
      const wait = this.#retryMs;
      this.#retryMs = Math.min(5000, this.#retryMs * 2);
      void this.#tokenRefused().then((refused) => {
        this.#handlers.onState(refused ? "refused" : "closed");
        // Still retried (slowly when refused): the same parley may take the token again.
        setTimeout(() => this.#connect(), refused ? 5000 : wait);
      });
    });
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
