/** Test images made with the image library parley uses (Photon). */
import { createRequire } from "node:module";

const photon = createRequire(import.meta.url)("@silvia-odwyer/photon-node") as typeof import("@silvia-odwyer/photon-node");

/** An image of `width`×`height` (a gradient, so encoders cannot make it trivially small). */
export function makeImage(width: number, height: number, format: "png" | "jpeg"): Uint8Array {
  const pixels = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) pixels.set([i % 251, (i >> 3) % 253, (i >> 7) % 255, 255], i * 4);
  const image = new photon.PhotonImage(pixels, width, height);
  try {
    return format === "png" ? image.get_bytes() : image.get_bytes_jpeg(90);
  } finally {
    image.free();
  }
}
