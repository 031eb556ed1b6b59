/**
 * images.autoResize's image fitting (in-process): sizes read from file headers, images within
 * the limits untouched, larger ones scaled to 2000 pixels a side and re-encoded.
 */
import { describe, expect, it } from "vitest";
import { fitImage, imageSize, MAX_IMAGE_SIDE } from "../src/tools/image-fit.js";
import { makeImage } from "./helpers/images.js";

describe("image fitting for the read tool", () => {
  it("reads width and height from PNG, JPEG and GIF headers", () => {
    expect(imageSize(makeImage(37, 19, "png"))).toEqual({ width: 37, height: 19 });
    expect(imageSize(makeImage(41, 23, "jpeg"))).toEqual({ width: 41, height: 23 });
    const gif = Uint8Array.from([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x0a, 0x00, 0x05, 0x00]);
    expect(imageSize(gif)).toEqual({ width: 10, height: 5 });
    expect(imageSize(Uint8Array.from([1, 2, 3]))).toBeUndefined();
  });

  it("passes an image within the limits through untouched", async () => {
    const png = makeImage(300, 200, "png");
    const fitted = await fitImage(png, "image/png");
    expect(fitted).toEqual({ data: Buffer.from(png).toString("base64"), mimeType: "image/png" });
  });

  it("scales an image over 2000 pixels a side down to 2000, keeping its shape", async () => {
    const fitted = await fitImage(makeImage(2600, 130, "png"), "image/png");
    expect(fitted?.resized).toEqual({ fromWidth: 2600, fromHeight: 130, toWidth: MAX_IMAGE_SIDE, toHeight: 100 });
    expect(imageSize(Buffer.from(fitted?.data ?? "", "base64"))).toEqual({ width: MAX_IMAGE_SIDE, height: 100 });
  });
});
