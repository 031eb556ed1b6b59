/**
 * What the tests that drive pi's own RpcClient class share (pi-rpc-client: 0.73.1's class against
 * pi and parley; newest-rpc-client: 1.6.0's against parley): the class's public methods as its
 * package ships them, a client whose calls of them are recorded (for the tests that check every
 * method was called), the project such a client starts in, and a step's outcome as compared.
 */
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, agentWorld } from "./offline-agents.js";

/** The public methods of the class in `clientJs`: its prototype, less the constructor and what its .d.ts beside it marks `private`. */
export function publicMethods(clientJs: string, prototype: object): string[] {
  const declared = readFileSync(clientJs.replace(/\.js$/, ".d.ts"), "utf8");
  const hidden = new Set([...declared.matchAll(/^\s*private (\w+)/gm)].map((m) => m[1]));
  return Object.getOwnPropertyNames(prototype).filter((name) => name !== "constructor" && !hidden.has(name));
}

/** `client`, with each call of one of `methods` added to `called`. */
export function recordingCalls<T extends object>(client: T, methods: readonly string[], called: Set<string>): T {
  return new Proxy(client, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof key !== "string" || typeof value !== "function" || !methods.includes(key)) return value;
      return (...args: unknown[]) => {
        called.add(key);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/**
 * A private world for a client's agent, its project ready for the method steps: a prompt
 * template `/greet` ("Reply with just: hi-$1"), the project trusted (the newest pi uses a
 * project's .pi/ only then; pi 0.73.1 reads no trust file), and a compaction budget of one token
 * (pi 1.6 refuses to compact what fits keepRecentTokens, and these sessions are small).
 * `sessions` is the folder for `--session-dir` (not made).
 */
export function clientWorld(prefix: string): AgentWorld & { sessions: string } {
  const world = agentWorld(prefix);
  const { cwd, agentDir } = world;
  mkdirSync(join(cwd, ".pi", "prompts"), { recursive: true });
  writeFileSync(join(cwd, ".pi", "prompts", "greet.md"), "---\ndescription: Greet someone\n---\nReply with just: hi-$1\n");
  writeFileSync(join(agentDir, "trust.json"), JSON.stringify({ [realpathSync(cwd)]: true }));
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 1 } }));
  return { ...world, sessions: join(world.base, "sessions") };
}

/**
 * A step's value, or the error it threw (an answer to compare); a failed expectation inside a
 * step is not an answer: it fails the test, named by its step.
 */
export async function settle(run: () => Promise<unknown>, step = ""): Promise<unknown> {
  try {
    return { ok: await run() };
  } catch (error) {
    if (error instanceof Error && error.name === "AssertionError") throw new Error(`${step}: ${error.message}`, { cause: error });
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
