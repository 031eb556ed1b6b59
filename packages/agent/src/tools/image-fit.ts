/**
 * settings.json `images.autoResize` (on unless set to false), as pi applies it to what the `read`
 * tool returns: an image wider or taller than 2000 pixels, or over 4.5 MB once base64-encoded
 * (under the 5 MB providers accept), is scaled down and re-encoded (the smaller of PNG and JPEG;
 * lower JPEG quality, then smaller sizes, until it fits). Images within the limits are passed
 * through untouched, and the image library (Photon, WebAssembly) loads only for one that is not.
 */
import { importModule } from "../startup/module-loader.js";

type Photon = typeof import("@silvia-odwyer/photon-node");

export const MAX_IMAGE_SIDE = 2000;
export const MAX_IMAGE_BASE64_BYTES = 4.5 * 1024 * 1024;
const JPEG_QUALITIES = [80, 70, 55, 40];

export interface FittedImage {
  data: string;
  mimeType: string;
  /** Set when the image was scaled: the model needs it to map coordinates back to the original. */
  resized?: { fromWidth: number; fromHeight: number; toWidth: number; toHeight: number };
}

/** Width and height from the file's header (PNG, GIF, JPEG); undefined when it cannot tell. */
export function imageSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length >= 24 && bytes[0] === 0x89 && bytes[1] === 0x50) return { width: view.getUint32(16), height: view.getUint32(20) };
  if (bytes.length >= 10 && bytes[0] === 0x47 && bytes[1] === 0x49) return { width: view.getUint16(6, true), height: view.getUint16(8, true) };
  if (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xd8) {
    // Walk the JPEG segments to the frame header (SOF0–SOF15, not DHT/JPG/DAC, which share the range).
    for (let at = 2; at + 9 < bytes.length; ) {
      if (bytes[at] !== 0xff) return undefined;
      const marker = bytes[at + 1]!;
      if (marker === 0xff) {
        at++;
        continue;
      }
      const length = view.getUint16(at + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { width: view.getUint16(at + 7), height: view.getUint16(at + 5) };
      }
      at += 2 + length;
    }
  }
  return undefined;
}

const base64Length = (bytes: number): number => Math.ceil(bytes / 3) * 4;

/** Whether the image may go as it is, without decoding it. */
function fitsAsIs(bytes: Uint8Array): boolean {
  const size = imageSize(bytes);
  return size !== undefined && size.width <= MAX_IMAGE_SIDE && size.height <= MAX_IMAGE_SIDE && base64Length(bytes.length) < MAX_IMAGE_BASE64_BYTES;
}

let photon: Promise<Photon | undefined> | undefined;
function loadPhoton(): Promise<Photon | undefined> {
  photon ??= importModule<Photon>("@silvia-odwyer/photon-node").catch(() => undefined);
  return photon;
}

/**
 * The image as the model should get it: unchanged when within the limits, else scaled down;
 * undefined when it cannot be made to fit. When the image library cannot be loaded or cannot
 * decode the file, the image goes as it is (the provider may refuse it; nothing is hidden).
 */
export async function fitImage(bytes: Uint8Array, mimeType: string): Promise<FittedImage | undefined> {
  const original: FittedImage = { data: Buffer.from(bytes).toString("base64"), mimeType };
  if (fitsAsIs(bytes)) return original;
  const lib = await loadPhoton();
  if (!lib) return original;
  let image: InstanceType<Photon["PhotonImage"]>;
  try {
    image = lib.PhotonImage.new_from_byteslice(bytes);
  } catch {
    return original;
  }
  try {
    const fromWidth = image.get_width();
    const fromHeight = image.get_height();
    if (fromWidth <= MAX_IMAGE_SIDE && fromHeight <= MAX_IMAGE_SIDE && original.data.length < MAX_IMAGE_BASE64_BYTES) return original;
    const scale = Math.min(1, MAX_IMAGE_SIDE / fromWidth, MAX_IMAGE_SIDE / fromHeight);
    let width = Math.max(1, Math.round(fromWidth * scale));
    let height = Math.max(1, Math.round(fromHeight * scale));
    for (;;) {
      const scaled = lib.resize(image, width, height, lib.SamplingFilter.Lanczos3);
      try {
        const candidates: [Uint8Array, string][] = [
          [scaled.get_bytes(), "image/png"],
          ...JPEG_QUALITIES.map((q): [Uint8Array, string] => [scaled.get_bytes_jpeg(q), "image/jpeg"]),
        ];
        const fits = candidates.filter(([data]) => base64Length(data.length) < MAX_IMAGE_BASE64_BYTES).sort((a, b) => a[0].length - b[0].length)[0];
        if (fits)
          return { data: Buffer.from(fits[0]).toString("base64"), mimeType: fits[1], resized: { fromWidth, fromHeight, toWidth: width, toHeight: height } };
      } finally {
        scaled.free();
      }
      if (width === 1 && height === 1) return undefined;
      width = Math.max(1, Math.floor(width * 0.75));
      height = Math.max(1, Math.floor(height * 0.75));
    }
  } finally {
    image.free();
  }
}

/** The image re-encoded as PNG (a format models do not take, such as BMP); undefined when it cannot be decoded. */
export async function convertToPng(bytes: Uint8Array): Promise<Uint8Array | undefined> {
  const lib = await loadPhoton();
  if (!lib) return undefined;
  try {
    const image = lib.PhotonImage.new_from_byteslice(bytes);
    try {
      return image.get_bytes();
    } finally {
      image.free();
    }
  } catch {
    return undefined;
  }
}
