/**
 * Every record an agent sends unasked (each event, and the extension UI records), handled through
 * one table the compiler checks is complete. A front end that declares its handlers as an
 * `EventTable` stops compiling when the protocol gains an event, until it handles the new one or
 * says it ignores it (`null`): nothing new is dropped silently.
 *
 *   onEvents(client, { agent_start: () => …, turn_start: null, … });
 */
import { DisposableStore, type Disposable } from "@parley/protocol/disposable";
import type { AgentEventMap, AgentEventType } from "./records.js";

/** A handler for each record type; `null` marks a type the front end ignores on purpose. */
export type EventTable = { readonly [K in AgentEventType]: ((event: AgentEventMap[K]) => void) | null };

/** What onEvents needs of a client (an `RpcClient` is one). */
export interface EventSource {
  on<K extends AgentEventType>(type: K, listener: (event: AgentEventMap[K]) => void): Disposable;
}

/** Subscribes each handler of `table` to its record type; disposing the result unsubscribes them all. */
export function onEvents(client: EventSource, table: EventTable): Disposable {
  const subscriptions = new DisposableStore();
  const subscribe = <K extends AgentEventType>(type: K): void => {
    const handler = table[type];
    if (handler !== null) subscriptions.add(client.on(type, handler));
  };
  // The table's keys are exactly AgentEventType's (the mapped type admits no others).
  for (const type of Object.keys(table) as AgentEventType[]) subscribe(type);
  return subscriptions;
}
