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
