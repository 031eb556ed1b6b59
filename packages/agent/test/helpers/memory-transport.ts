/** A transport for in-process tests: push lines in, read records out, no pipes involved. */
import type { Transport, TransportSink } from "../../src/core/transport.js";

export class MemoryTransport implements Transport {
  readonly sent: Record<string, unknown>[] = [];
  sink: TransportSink | undefined;
  start(sink: TransportSink): void {
    this.sink = sink;
  }
  send(record: object): void {
    // Round-trip through JSON so tests see exactly what a client would.
    this.sent.push(JSON.parse(JSON.stringify(record)) as Record<string, unknown>);
  }
  flush(): Promise<void> {
    return Promise.resolve();
  }
  /** Memory takes everything at once: never backed up. */
  readonly backedUp = false;
  whenWritable(): Promise<void> {
    return Promise.resolve();
  }
  line(record: object | string): void {
    this.sink?.line(typeof record === "string" ? record : JSON.stringify(record));
  }
  of(type: string): Record<string, unknown>[] {
    return this.sent.filter((r) => r["type"] === type);
  }
}
