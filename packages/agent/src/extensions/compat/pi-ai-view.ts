/**
 * What an extension gets for `@earendil-works/pi-ai` or `@mariozechner/pi-ai` (and their
 * `/compat`), as pi 1.6 gives it: pi-ai's compat entry (the old global API over the new one: the
 * provider registry, stream/complete, the built-in catalogue) plus TypeBox's `Type`, which pi-ai's
 * root no longer re-exports, and a `StringEnum` typed with TypeBox. The instances are parley's
 * own, so a provider an extension registers is the one parley's loop reaches.
 */
import { type TUnsafe, Type } from "typebox";

export * from "@earendil-works/pi-ai/compat";
export { Type };

/** A string enum schema as `{ type: "string", enum: [...] }` (providers that reject anyOf/const accept it). */
export function StringEnum<T extends readonly string[]>(values: T, options?: { description?: string; default?: T[number] }): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({
    type: "string",
    enum: values,
    ...(options?.description ? { description: options.description } : {}),
    ...(options?.default ? { default: options.default } : {}),
  });
}
