/**
 * Reads a file the model named, whole, as pi does (`fs.readFile`), without waiting on what never
 * ends. A FIFO blocks the read for ever (and with it parley's exit: Node joins its I/O threads at
 * exit), so it is refused; the file is opened without waiting (O_NONBLOCK) so that a FIFO is seen
 * for what it is before anything blocks. A character device (`/dev/null`) and a file that reports
 * size 0 but has content (`/proc/*`) are read to their end, as pi does, but without waiting (a
 * terminal with nothing typed is an error) and only up to a ceiling (`/dev/zero` never ends).
 */
import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";

const OPEN_NO_WAIT = constants.O_RDONLY | constants.O_NONBLOCK;
/** What a source of unknown length may give before it counts as endless. */
export const UNSIZED_READ_CEILING = 16 * 1024 * 1024;

export async function readRegularFile(path: string): Promise<Buffer> {
  const handle = await open(path, OPEN_NO_WAIT);
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${path}'`), { code: "EISDIR" });
    if (stat.isFile() && stat.size > 0) return await handle.readFile();
    if (stat.isFile() || stat.isCharacterDevice()) return await readToEnd(handle, path);
    throw new Error(`${path} is not a regular file (a FIFO, a block device or a socket): reading it could wait or go on for ever`);
  } finally {
    await handle.close();
  }
}

/** Reads until end of file, refusing to wait for data (EAGAIN) or to go past the ceiling. */
async function readToEnd(handle: FileHandle, path: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(64 * 1024);
    let bytesRead: number;
    try {
      ({ bytesRead } = await handle.read(chunk, 0, chunk.length, null));
    } catch (error) {
      if (error instanceof Error && "code" in error && error.code === "EAGAIN") throw new Error(`${path} has no data to read now: reading it would wait`);
      throw error;
    }
    if (bytesRead === 0) return Buffer.concat(chunks, total);
    total += bytesRead;
    if (total > UNSIZED_READ_CEILING)
      throw new Error(`${path} does not end (more than ${UNSIZED_READ_CEILING / (1024 * 1024)} MiB read): it is not a file that can be read whole`);
    chunks.push(chunk.subarray(0, bytesRead));
  }
}

/** The first `length` bytes of a regular file; undefined for anything else (it is not waited on). */
export async function readRegularHead(path: string, length: number): Promise<Uint8Array | undefined> {
  const handle = await open(path, OPEN_NO_WAIT);
  try {
    if (!(await handle.stat()).isFile()) return undefined;
    const head = Buffer.alloc(length);
    const { bytesRead } = await handle.read(head, 0, length, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
