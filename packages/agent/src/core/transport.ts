/**
 * The seam between the RPC server and the bytes. stdio is one transport; a WebSocket is another.
 * The server hands over whole records and receives whole lines of text.
 */
import type { OutputPressure } from "../output-pressure.js";

export type { OutputPressure };

export interface TransportSink {
  /** One complete inbound line (one JSON text, LF and trailing CR removed). */
  line(text: string): void;
  /** An inbound line was larger than the transport accepts; it was discarded. */
  overflow(info: { bytes: number; maxLineBytes: number }): void;
  /** The peer closed its side: no more input will come. */
  end(): void;
}

export interface Transport extends OutputPressure {
  start(sink: TransportSink): void;
  /** Queues one outbound record; records leave in the order they were sent. */
  send(record: object): void;
  /** Resolves once everything sent so far has been handed to the peer (or the peer is gone). */
  flush(): Promise<void>;
}
