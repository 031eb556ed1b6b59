/**
 * A resumed session's messages as the file spells them, read back from the file when the first
 * get_messages answer is made (where they are comes from loading, see message-line.ts): nothing
 * of them is held in memory meanwhile. (Holding the file's bytes from the load instead made the
 * load itself ~2× slower: V8 collected the growing heap more often with 100 MB of buffers beside it.)
 *
 * Read in blocks, in the order asked (a context's order is the file's). The file must still be
 * the one loaded, as this session left it: the same device and inode, size and modification
 * time (the session's own appends update them, see sameFileNow). Anything else (another process
 * appended, an editor rewrote it in place) and every message is serialised. A span that is not
 * a JSON object's bytes is left to the serialiser too.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import type { ByteSpan } from "./format.js";

const BLOCK = 1 << 20;

export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

export class MessageBytes {
  readonly #file: string;
  #identity: FileIdentity;
  readonly #spans: Map<object, ByteSpan>;
  #block: Buffer = Buffer.alloc(0);
  #blockAt = 0;
  /** The file is no longer the one loaded: every message is serialised. */
  #changed = false;

  constructor(file: string, identity: FileIdentity, spans: Map<object, ByteSpan>) {
    this.#file = file;
    this.#identity = identity;
    this.#spans = spans;
  }

  /** The session appended to the file: this is how it is now. */
  sameFileNow(identity: FileIdentity): void {
    this.#identity = identity;
  }

  /** The message's JSON as the file holds it, or undefined (serialise it then). */
  get(message: object): Uint8Array | undefined {
    const span = this.#spans.get(message);
    if (span === undefined || this.#changed) return undefined;
    if (span.start < this.#blockAt || span.end > this.#blockAt + this.#block.length) {
      if (!this.#read(span)) return undefined;
    }
    const bytes = this.#block.subarray(span.start - this.#blockAt, span.end - this.#blockAt);
    return bytes[0] === 0x7b && bytes[bytes.length - 1] === 0x7d ? bytes : undefined;
  }

  /** Reads the block that starts at the span (at least the span). False when it cannot be had. */
  #read(span: ByteSpan): boolean {
    let fd: number | undefined;
    try {
      fd = openSync(this.#file, "r");
      const stat = fstatSync(fd);
      const was = this.#identity;
      if (stat.dev !== was.dev || stat.ino !== was.ino || stat.size !== was.size || stat.mtimeMs !== was.mtimeMs) {
        this.#changed = true;
        return false;
      }
      const length = Math.max(BLOCK, span.end - span.start);
      const block = this.#block.length === length ? this.#block : Buffer.allocUnsafe(length);
      let got = 0;
      for (let read = -1; read !== 0 && got < length; got += read) read = readSync(fd, block, got, length - got, span.start + got);
      this.#block = block.subarray(0, got);
      this.#blockAt = span.start;
      return got >= span.end - span.start;
    } catch {
      this.#changed = true;
      return false;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
}
