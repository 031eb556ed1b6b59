/**
 * The seam between the RPC server and the bytes. stdio is one transport; a WebSocket is another.
 * The server hands over whole records and receives whole lines of text.
 */
export interface TransportSink {
  /** One complete inbound line (one JSON text, LF and trailing CR removed). */
  line(text: string): void;
  /** An inbound line was larger than the transport accepts; it was discarded. */
  overflow(info: { bytes: number; maxLineBytes: number }): void;
  /** The peer closed its side: no more input will come. */
  end(): void;
}

/**
 * Whether the peer keeps up with the output. Producers that can wait (the model's stream, a
 * command's output) check `backedUp` after sending and, when set, wait for `whenWritable()` before
 * producing more, so output a client does not read stays at its source instead of in memory.
 */
export interface OutputPressure {
  /** The peer is not taking output as fast as it comes: what is sent now waits in memory. */
  readonly backedUp: boolean;
  /** Resolves once output is no longer backed up (at once when it is not; also when the peer is gone). */
  whenWritable(): Promise<void>;
}

export interface Transport extends OutputPressure {
  start(sink: TransportSink): void;
  /** Queues one outbound record; records leave in the order they were sent. */
  send(record: object): void;
  /** Resolves once everything sent so far has been handed to the peer (or the peer is gone). */
  flush(): Promise<void>;
}
