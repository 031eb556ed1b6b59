/**
 * The ACP SDK's message stream over parley's own stdio transport: the same linear JSONL reader,
 * LF-only writer and output backpressure as RPC mode (no Node readline, no stream re-encoding).
 * Lines that are not JSON-RPC messages get a JSON-RPC error here, never a crash.
 */
import type { AnyMessage, Stream } from "@agentclientprotocol/sdk";
import type { Transport } from "../../core/transport.js";

export function transportStream(transport: Transport): Stream {
  const readable = new ReadableStream<AnyMessage>({
    start(controller) {
      transport.start({
        line(text) {
          if (text.trim() === "") return;
          let value: unknown;
          try {
            value = JSON.parse(text);
          } catch (error) {
            transport.send(rpcError(-32700, `Parse error: ${error instanceof Error ? error.message : String(error)}`));
            return;
          }
          if (isMessage(value)) controller.enqueue(value);
          else transport.send(rpcError(-32600, 'Invalid Request: every line must be one JSON-RPC 2.0 message (an object with "jsonrpc": "2.0")'));
        },
        overflow(info) {
          transport.send(
            rpcError(
              -32600,
              `Line of ${info.bytes} bytes exceeds the maximum of ${info.maxLineBytes} bytes and was discarded (raise it with --max-line-bytes)`,
            ),
          );
        },
        end() {
          controller.close();
        },
      });
    },
  });
  const writable = new WritableStream<AnyMessage>({
    write(message) {
      transport.send(message);
    },
  });
  return { readable, writable };
}

function isMessage(value: unknown): value is AnyMessage {
  return typeof value === "object" && value !== null && !Array.isArray(value) && (value as { jsonrpc?: unknown }).jsonrpc === "2.0";
}

const rpcError = (code: number, message: string) => ({ jsonrpc: "2.0", id: null, error: { code, message } });
