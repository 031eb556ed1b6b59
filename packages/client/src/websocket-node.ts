/**
 * The Node entry's WebSocket transport: as websocket.ts, with the `ws` package (loaded only when
 * a connection is made) where Node has no global WebSocket.
 */
import { WebSocketTransport as BrowserWebSocketTransport, type WebSocketConstructor, type WebSocketTransportOptions } from "./websocket.js";

export class WebSocketTransport extends BrowserWebSocketTransport {
  protected override loadWebSocket(): Promise<WebSocketConstructor> {
    // `ws` implements the browser API the transport uses; its declared types are wider.
    return import("ws").then((ws) => ws.WebSocket as unknown as WebSocketConstructor);
  }
}

export function webSocketTransport(url: string, options?: WebSocketTransportOptions): WebSocketTransport {
  return new WebSocketTransport(url, options);
}
