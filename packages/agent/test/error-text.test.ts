import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { errorMessage, errorText } from "../src/error-text.js";

// instanceof Error, and reading its message throws.
const hostile = (): Error =>
  Object.create(Error.prototype, {
    message: {
      get() {
        throw new Error("message getter");
      },
    },
  }) as Error;
const throwingToString = {
  toString: () => {
    throw new Error("toString");
  },
};
const revokedProxy = (() => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
})();

describe("errorMessage / errorText", () => {
  it("describe an Error by its message and stack", () => {
    const error = new TypeError("bad thing");
    expect(errorMessage(error)).toBe("bad thing");
    expect(errorText(error)).toEqual({ error: "bad thing", stack: error.stack });
  });

  it("describe other thrown values as text, without a stack", () => {
    expect(errorText(null)).toEqual({ error: "null" });
    expect(errorText(undefined)).toEqual({ error: "undefined" });
    expect(errorText("plain")).toEqual({ error: "plain" });
    expect(errorText(42n)).toEqual({ error: "42" });
    expect(errorText(Symbol("s"))).toEqual({ error: "Symbol(s)" });
  });

  it("never throw, whatever was thrown", () => {
    for (const value of [Object.create(null), throwingToString, revokedProxy, hostile()]) {
      expect(typeof errorMessage(value)).toBe("string");
      expect(errorText(value)).toEqual({ error: expect.any(String) });
    }
    expect(errorMessage(Object.create(null))).toBe("a thrown object that cannot be turned into text");
    fc.assert(
      fc.property(
        fc.anything({ withNullPrototype: true, withBigInt: true, withMap: true, withSet: true, withObjectString: true, withBoxedValues: true }),
        (value) => {
          expect(typeof errorMessage(value)).toBe("string");
          expect(typeof errorText(value).error).toBe("string");
        },
      ),
    );
  });
});
