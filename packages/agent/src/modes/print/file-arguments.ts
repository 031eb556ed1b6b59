/**
 * `@path` arguments, read as pi's print and JSON mode read them: a text file becomes
 * `<file name="ABS">\nTEXT\n</file>\n`, an image (png, jpeg, gif, webp, by its bytes) an attachment
 * with an empty `<file name="ABS"></file>\n` naming it, a BMP one converted to PNG (the tag says
 * so), an empty file nothing. Paths start at the folder parley was started in (`~` expanded).
 */
import { readFile, stat } from "node:fs/promises";
import { open } from "node:fs/promises";
import type { ImageContent } from "@parley/protocol";
import { convertToPng } from "../../tools/image-fit.js";
import { resolveReadPath } from "../../tools/path-utils.js";
import { sniffImageMimeType } from "../../tools/read.js";

/** A file argument that cannot be used: the run stops before it starts (pi: exit 1). */
export class FileArgumentError extends Error {
  override readonly name = "FileArgumentError";
}

/** Enough of a file's head to tell the image formats apart. */
const SNIFF_BYTES = 4100;

async function head(path: string): Promise<Uint8Array> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** A Windows bitmap, by its header (as pi tells one): "BM", sizes that agree, one plane, a known depth. */
function isBmp(bytes: Uint8Array): boolean {
  if (bytes.length < 26 || bytes[0] !== 0x42 || bytes[1] !== 0x4d) return false;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fileSize = view.getUint32(2, true);
  const pixelOffset = view.getUint32(10, true);
  const dibSize = view.getUint32(14, true);
  if ((fileSize !== 0 && fileSize < 26) || pixelOffset < 14 + dibSize || (fileSize !== 0 && pixelOffset >= fileSize)) return false;
  const at = dibSize === 12 ? 22 : dibSize >= 40 && dibSize <= 124 ? 26 : undefined;
  if (at === undefined || bytes.length < at + 4) return false;
  return view.getUint16(at, true) === 1 && [1, 4, 8, 16, 24, 32].includes(view.getUint16(at + 2, true));
}

export async function readFileArguments(paths: readonly string[], cwd: string): Promise<{ text: string; images: ImageContent[] }> {
  let text = "";
  const images: ImageContent[] = [];
  for (const given of paths) {
    const path = resolveReadPath(given, cwd);
    const stats = await stat(path).catch(() => undefined);
    if (stats === undefined) throw new FileArgumentError(`File not found: ${path}`);
    if (stats.size === 0) continue;
    try {
      const start = await head(path);
      if (isBmp(start)) {
        const png = await convertToPng(await readFile(path));
        if (png === undefined) text += `<file name="${path}">[Image omitted: could not be converted to a supported inline image format.]</file>\n`;
        else {
          images.push({ type: "image", mimeType: "image/png", data: Buffer.from(png).toString("base64") });
          text += `<file name="${path}">[Image converted from image/bmp to image/png.]</file>\n`;
        }
        continue;
      }
      const mimeType = sniffImageMimeType(start);
      if (mimeType !== undefined) {
        images.push({ type: "image", mimeType, data: (await readFile(path)).toString("base64") });
        text += `<file name="${path}"></file>\n`;
        continue;
      }
      // A leading byte-order mark is not part of the text (as in pi).
      const content = (await readFile(path, "utf8")).replace(/^\uFEFF/, "");
      text += `<file name="${path}">\n${content}\n</file>\n`;
    } catch (error) {
      throw new FileArgumentError(`Could not read file ${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return { text, images };
}
