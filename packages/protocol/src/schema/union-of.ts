import { Type, type TSchema, type TUnion } from "typebox";

/**
 * A union schema of members gathered at run time (from the command table). TypeBox types a
 * union by the tuple of its members; a one-member tuple whose member is the union of their
 * types gives the same static type.
 */
export function unionOf<T extends TSchema>(members: readonly T[], description: string): TUnion<[T]> {
  return Type.Union([...members], { description }) as TUnion<[T]>;
}
