/**
 * Two linked in-process transports: what one sends, the other receives, framed exactly as on
 * a pipe (serialized to a JSON line, split by the protocol's JSONL splitter, parsed). Delivery
 * is asynchronous and in order. For tests and for hosting an agent in the same process.
 */
import { JsonlLineSplitter } from "@parley/protocol/jsonl";
import type { CloseInfo } from "./errors.js";
import { TransportBase } from "./transport.js";

export class InMemoryTransport extends TransportBase {
  #peer: InMemoryTransport | undefined;
  readonly #splitter = new JsonlLineSplitter((line) => this.receiveLine(line));

  /** @internal Links two ends; use createInMemoryTransportPair(). */
  static link(a: InMemoryTransport, b: InMemoryTransport): void {
    a.#peer = b;
    b.#peer = a;
    a.markOpen();
    b.markOpen();
  }

  /** Writes raw text to the other end, as is: for feeding it malformed or split lines. */
  sendRaw(text: string): void {
    if (this.isClosed) return;
    const peer = this.#peer;
    if (peer !== undefined) queueMicrotask(() => peer.#receiveText(text));
  }

  protected writeLine(line: string): void {
    this.sendRaw(line);
  }

  close(): Promise<void> {
    this.#end({ reason: "local" }, { reason: "remote" });
    return this.closed.then(() => undefined);
  }

  #receiveText(text: string): void {
    if (!this.isClosed) this.#splitter.push(text);
  }

  #end(mine: CloseInfo, theirs: CloseInfo): void {
    if (this.isClosed) return;
    const peer = this.#peer;
    this.markClosed(mine);
    // After the lines already in flight, like a pipe: the peer reads them, then sees the end.
    if (peer !== undefined) queueMicrotask(() => peer.#end(theirs, mine));
  }
}

/** `[clientSide, agentSide]`: two connected transports. close() on either closes both. */
export function createInMemoryTransportPair(): [InMemoryTransport, InMemoryTransport] {
  const a = new InMemoryTransport();
  const b = new InMemoryTransport();
  InMemoryTransport.link(a, b);
  return [a, b];
}
