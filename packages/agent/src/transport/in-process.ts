/**
 * An agent and a client in one process: a linked pair whose agent end is the server's
 * `Transport` and whose client end is `@parley/client`'s, so a real `RpcClient` drives an
 * `RpcServer` with no pipes. Records are framed exactly as on a pipe (serialized to one JSON line
 * with the protocol's serializer, split by its JSONL splitter), delivered asynchronously and in
 * order, in both directions.
 *
 *   const { client, agent } = inProcessTransportPair();
 *   const server = new RpcServer({ transport: agent, cwd });
 *   await server.start();
 *   const rpc = new RpcClient(client);
 *   void server.closed.then(() => agent.close()); // the client sees the agent go, as on a pipe
 */
import { TransportBase } from "@parley/client";
import { JsonlLineSplitter, serializeJsonLine } from "@parley/protocol/jsonl";
import type { Transport, TransportSink } from "../core/transport.js";

export interface InProcessTransportOptions {
  /** Lines from the client longer than this many bytes are discarded and reported to the server (default: the protocol's 128 MiB). */
  maxLineBytes?: number;
}

/** The client's end: give it to `new RpcClient(…)`. */
export class InProcessClientTransport extends TransportBase {
  readonly #splitter = new JsonlLineSplitter((line) => this.receiveLine(line));
  readonly #agent: InProcessAgentTransport;

  /** @internal Use inProcessTransportPair(). */
  constructor(agent: InProcessAgentTransport) {
    super();
    this.#agent = agent;
    this.markOpen();
  }

  /** Writes raw text to the agent, as is: for feeding it malformed or split lines. */
  sendRaw(text: string): void {
    if (!this.isClosed) this.#agent.deliver(text);
  }

  protected writeLine(line: string): void {
    this.sendRaw(line);
  }

  /** Ends the connection: the agent reads what was sent, then sees the end of its input. */
  close(): Promise<void> {
    if (!this.isClosed) {
      this.markClosed({ reason: "local" });
      this.#agent.deliverEnd();
    }
    return this.closed.then(() => undefined);
  }

  /** @internal Text from the agent. */
  receive(text: string): void {
    if (!this.isClosed) this.#splitter.push(text);
  }

  /** @internal The agent closed its end. */
  end(): void {
    this.markClosed({ reason: "remote" });
  }
}

/** The agent's end: give it to `new RpcServer({ transport })`. Memory takes everything at once: never backed up. */
export class InProcessAgentTransport implements Transport {
  readonly backedUp = false;
  #client: InProcessClientTransport | undefined;
  #sink: TransportSink | undefined;
  /** Text that arrived before the server started reading, delivered when it does. */
  #early: (string | null)[] | undefined = [];
  #closed = false;
  readonly #splitter: JsonlLineSplitter;

  /** @internal Use inProcessTransportPair(). */
  constructor(options: InProcessTransportOptions = {}) {
    this.#splitter = new JsonlLineSplitter((line) => this.#sink?.line(line), {
      ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
      onOverflow: (info) => this.#sink?.overflow(info),
    });
  }

  /** @internal */
  link(client: InProcessClientTransport): void {
    this.#client = client;
  }

  start(sink: TransportSink): void {
    this.#sink = sink;
    const early = this.#early ?? [];
    this.#early = undefined;
    for (const text of early) this.#take(text);
  }

  send(record: object): void {
    if (this.#closed) return;
    // Serialized now, as a pipe would: a record changed after it was sent is not seen changed.
    const line = serializeJsonLine(record);
    const client = this.#client;
    if (client !== undefined) queueMicrotask(() => client.receive(line));
  }

  /** Everything sent so far reaches the client on the microtasks already queued. */
  flush(): Promise<void> {
    return new Promise((resolve) => queueMicrotask(resolve));
  }

  whenWritable(): Promise<void> {
    return Promise.resolve();
  }

  /** Ends the agent's side: the client reads the records already sent, then sees the connection closed ("remote"). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const client = this.#client;
    if (client !== undefined) queueMicrotask(() => client.end());
  }

  /** @internal Text from the client, after what is already in flight. */
  deliver(text: string): void {
    queueMicrotask(() => this.#take(text));
  }

  /** @internal The client closed its end. */
  deliverEnd(): void {
    queueMicrotask(() => this.#take(null));
  }

  #take(text: string | null): void {
    if (this.#early !== undefined) {
      this.#early.push(text);
      return;
    }
    if (text === null) this.#sink?.end();
    else this.#splitter.push(text);
  }
}

export interface InProcessTransportPair {
  /** For `new RpcClient(client)` (`@parley/client`). */
  readonly client: InProcessClientTransport;
  /** For `new RpcServer({ transport: agent })`. */
  readonly agent: InProcessAgentTransport;
}

/** Two linked ends: an `RpcClient` on `client` talks to an `RpcServer` on `agent`. */
export function inProcessTransportPair(options: InProcessTransportOptions = {}): InProcessTransportPair {
  const agent = new InProcessAgentTransport(options);
  const client = new InProcessClientTransport(agent);
  agent.link(client);
  return { client, agent };
}
