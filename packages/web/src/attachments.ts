/**
 * Images for the next message, pasted or dropped into the prompt box: shown as thumbnails with a
 * "Remove image" button each, sent with the prompt as the protocol's image content.
 */
import type { ImageContent } from "@parley/protocol";
import { h } from "./dom.js";

const TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
/** Larger files are refused (said in a toast) rather than sent over the WebSocket. */
const MAX_BYTES = 20 * 1024 * 1024;

export class Attachments {
  readonly element: HTMLElement;
  #images: ImageContent[] = [];

  constructor(target: HTMLElement, refuse: (why: string) => void) {
    this.element = h("div", { class: "attachments" });
    this.element.hidden = true;
    const take = (files: Iterable<File>): boolean => {
      let took = false;
      for (const file of files) {
        if (!TYPES.has(file.type)) continue;
        took = true;
        if (file.size > MAX_BYTES) {
          refuse(`${file.name || "image"} is over 20 MB`);
          continue;
        }
        void file.arrayBuffer().then((buffer) => this.add({ type: "image", mimeType: file.type, data: base64(new Uint8Array(buffer)) }));
      }
      return took;
    };
    target.addEventListener("paste", (event) => {
      if (event.clipboardData && take(event.clipboardData.files)) event.preventDefault();
    });
    target.addEventListener("dragover", (event) => {
      if (event.dataTransfer?.types.includes("Files")) event.preventDefault();
    });
    target.addEventListener("drop", (event) => {
      if (event.dataTransfer && take(event.dataTransfer.files)) event.preventDefault();
    });
  }

  add(image: ImageContent): void {
    this.#images.push(image);
    this.#render();
  }

  /** The images to send, and none left. */
  take(): ImageContent[] {
    const images = this.#images;
    this.#images = [];
    this.#render();
    return images;
  }

  /** Back after a refused send. */
  restore(images: ImageContent[]): void {
    this.#images = [...images, ...this.#images];
    this.#render();
  }

  #render(): void {
    this.element.hidden = this.#images.length === 0;
    this.element.replaceChildren(
      ...this.#images.map((image, index) => {
        const remove = h("button", { class: "small", attrs: { type: "button", "aria-label": `Remove image ${index + 1}` } }, "×");
        remove.addEventListener("click", () => {
          this.#images.splice(index, 1);
          this.#render();
        });
        return h(
          "figure",
          { class: "attachment" },
          h("img", { attrs: { src: `data:${image.mimeType};base64,${image.data}`, alt: `Image ${index + 1} to send` } }),
          remove,
        );
      }),
    );
  }
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
