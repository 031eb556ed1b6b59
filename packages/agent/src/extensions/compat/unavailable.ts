/**
 * Stand-ins for pi exports that cannot work in a headless agent. They exist so
 * an extension's `import { X } from "@mariozechner/pi-coding-agent"` resolves;
 * only actually using one fails, with a message naming the export.
 */

export const NO_TUI = "RPC mode has no terminal UI";
export const NOT_IN_PARLEY = "pi's SDK internals are not part of parley's extension API";

export function unavailableError(name: string, reason: string = NO_TUI): Error {
  return new Error(`${name} is not available in parley (${reason})`);
}

/** A function that throws when called. */
export function unavailableFunction(name: string, reason: string = NO_TUI): (...args: unknown[]) => never {
  const fn = (..._args: unknown[]): never => {
    throw unavailableError(name, reason);
  };
  Object.defineProperty(fn, "name", { value: name });
  return fn;
}

/** An async function that rejects when called (so `.catch()` chains still work). */
export function unavailableAsyncFunction(name: string, reason: string = NO_TUI): (...args: unknown[]) => Promise<never> {
  const fn = (..._args: unknown[]): Promise<never> => Promise.reject(unavailableError(name, reason));
  Object.defineProperty(fn, "name", { value: name });
  return fn;
}

const INTROSPECTION = new Set(["then", "catch", "finally", "asymmetricMatch", "toJSON", "inspect", "nodeType", "tagName"]);

/** Constructor type of a stub class: constructible, extendable, any static lookup allowed. */
export type UnavailableClass = (new (...args: any[]) => any) & { readonly [staticMember: string]: any };

/**
 * A class whose constructor throws. `class X extends Stub {}` still works (it
 * only fails on `new X()`), and static factories such as `SessionManager.inMemory()`
 * fail with the same clear message instead of "is not a function". It is a real
 * class (its source text says `class`, as the class it stands for): the static
 * lookups it lacks reach a proxy in its prototype chain.
 */
export function unavailableClass(name: string, reason: string = NO_TUI): UnavailableClass {
  const Stub = {
    [name]: class {
      constructor(..._args: unknown[]) {
        throw unavailableError(name, reason);
      }
    },
  }[name] as new (
    ...args: unknown[]
  ) => unknown;
  const statics = new Proxy(Function.prototype, {
    get(target, prop, receiver) {
      // Only plausible static method names become throwing stubs; symbols, Function's own
      // members and introspection probes (await, test matchers, util.inspect) pass through.
      if (typeof prop === "symbol" || prop in target || !/^[a-z][A-Za-z0-9]*$/.test(prop) || INTROSPECTION.has(prop)) {
        return Reflect.get(target, prop, receiver);
      }
      return unavailableFunction(`${name}.${prop}`, reason);
    },
  });
  Object.setPrototypeOf(Stub, statics);
  return Stub as UnavailableClass;
}
