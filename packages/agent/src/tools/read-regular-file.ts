/**
 * Reads a file the model named, whole. Only a regular file (or a directory, for the usual EISDIR
 * error): a FIFO blocks the read for ever, and with it parley's exit (Node joins its I/O threads
 * at exit), and a device such as /dev/zero never ends while memory grows. The file is opened
 * without waiting (O_NONBLOCK) so that a FIFO is seen for what it is before anything blocks.
 */
import { constants } from "node:fs";
import { open } from "node:fs/promises";

const OPEN_NO_WAIT = constants.O_RDONLY | constants.O_NONBLOCK;

export async function readRegularFile(path: string): Promise<Buffer> {
  const handle = await open(path, OPEN_NO_WAIT);
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${path}'`), { code: "EISDIR" });
    if (!stat.isFile()) throw new Error(`${path} is not a regular file (a FIFO, a device or a socket): reading it could wait or go on for ever`);
    return await handle.readFile();
  } finally {
    await handle.close();
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
