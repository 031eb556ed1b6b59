/**
 * The agent side of an in-memory pair, driven by the test: it records what the client sends
 * and writes whatever records the test tells it to.
 */
import { createInMemoryTransportPair, RpcClient, type InMemoryTransport } from "../../src/index.js";

export type Sent = Record<string, unknown> & { type: string };

export class FakeAgent {
  readonly received: Sent[] = [];
  readonly #waiters = new Set<() => void>();

  constructor(readonly transport: InMemoryTransport) {
    transport.onRecord((record) => {
      this.received.push(record as Sent);
      for (const wake of [...this.#waiters]) wake();
    });
  }

  /** The first received record (from index `from`) matching `match`; waits up to `ms`. */
  waitFor(match: (r: Sent) => boolean, ms = 60_000, from = 0): Promise<Sent> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.received.slice(from).find(match);
        if (found === undefined) return false;
        this.#waiters.delete(wake);
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const wake = (): void => void check();
      const timer = setTimeout(() => {
        this.#waiters.delete(wake);
        reject(new Error(`fake agent: nothing matched within ${ms} ms; received ${JSON.stringify(this.received)}`));
      }, ms);
      if (!check()) this.#waiters.add(wake);
    });
  }

  /** The command of this type the client sent (the first one not yet taken from `from`). */
  command(type: string, from = 0): Promise<Sent> {
    return this.waitFor((r) => r.type === type, 60_000, from);
  }

  responses(): Sent[] {
    return this.received.filter((r) => r.type === "extension_ui_response");
  }

  write(record: object): void {
    this.transport.send(record);
  }

  reply(command: Sent, data?: unknown): void {
    this.write({ type: "response", id: command["id"], command: command.type, success: true, ...(data === undefined ? {} : { data }) });
  }

  fail(command: Sent, error: string): void {
    this.write({ type: "response", id: command["id"], command: command.type, success: false, error });
  }

  dialog(id: string, method: "select" | "confirm" | "input" | "editor", extra: Record<string, unknown> = {}): void {
    const base =
      method === "select" ? { title: "Pick", options: ["a", "b", "c"] } : method === "confirm" ? { title: "Sure?", message: "Really?" } : { title: "Text?" };
    this.write({ type: "extension_ui_request", id, method, ...base, ...extra });
  }
}

export function connectFake(): { client: RpcClient; agent: FakeAgent; clientTransport: InMemoryTransport } {
  const [clientTransport, agentTransport] = createInMemoryTransportPair();
  const client = new RpcClient(clientTransport);
  return { client, agent: new FakeAgent(agentTransport), clientTransport };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Lets queued microtasks and I/O callbacks run. */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
