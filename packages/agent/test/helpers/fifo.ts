/**
 * A named pipe opened non-blocking at both ends: what fd 1 is once Node has made a stream of a
 * pipe. drain() reads whatever it holds now.
 */
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Fifo {
  reader: number;
  writer: number;
  drain(): Buffer;
  closeReader(): void;
  close(): void;
}

export function openFifo(): Fifo {
  const dir = mkdtempSync(join(tmpdir(), "parley-fifo-"));
  const path = join(dir, "fifo");
  execFileSync("mkfifo", [path]);
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  let readerOpen = true;
  let open = true;
  const buffer = Buffer.alloc(64 * 1024);
  return {
    reader,
    writer,
    drain() {
      const chunks: Buffer[] = [];
      for (;;) {
        let n: number;
        try {
          n = readSync(reader, buffer);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "EAGAIN") break;
          throw error;
        }
        if (n === 0) break;
        chunks.push(Buffer.from(buffer.subarray(0, n)));
      }
      return Buffer.concat(chunks);
    },
    closeReader() {
      if (readerOpen) closeSync(reader);
      readerOpen = false;
    },
    close() {
      if (!open) return;
      open = false;
      this.closeReader();
      closeSync(writer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
