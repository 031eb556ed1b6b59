/**
 * The web mode's HTTP server: `/health` for probes, the page and its two assets, and the
 * WebSocket at `/ws`. Everything but `/health` needs the token (query `token` or
 * `Authorization: Bearer`); a WebSocket from a foreign Origin is refused; on a loopback host,
 * a request naming another Host (DNS rebinding) is refused too.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { networkInterfaces } from "node:os";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { ConnectionHub } from "./connection-hub.js";

export interface WebServerOptions {
  host: string;
  port: number;
  /** Empty: no token (loopback only; the CLI refuses it elsewhere). */
  token: string;
  /** Origins allowed to open the WebSocket besides the page's own (e.g. "http://localhost:5173"). */
  allowedOrigins: readonly string[];
  /** The folder holding the page's built assets (app.js, app.css). */
  pageDir: string;
  hub: ConnectionHub;
  /** Largest accepted WebSocket message (a bigger one closes that connection with 1009). */
  maxMessageBytes: number;
  log: (message: string) => void;
}

export interface WebServer {
  /** The URL to open, token included. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const ASSETS: Record<string, string> = { "/app.js": "text/javascript; charset=utf-8", "/app.css": "text/css; charset=utf-8" };

export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const assets = new Map<string, Buffer>();
  for (const name of Object.keys(ASSETS)) assets.set(name, readFileSync(`${options.pageDir}${name}`));
  const tokenDigest = digest(options.token);
  const loopback = isLoopback(options.host);
  let port = options.port;

  const hostAllowed = (req: IncomingMessage): boolean => {
    if (!loopback) return true;
    const host = (req.headers.host ?? "").toLowerCase();
    return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${options.host.toLowerCase()}:${port}`].includes(host);
  };
  const authorized = (req: IncomingMessage, url: URL): boolean => {
    if (options.token === "") return true;
    const header = req.headers.authorization;
    const given = url.searchParams.get("token") ?? (header?.startsWith("Bearer ") ? header.slice(7) : undefined);
    return given !== undefined && timingSafeEqual(digest(given), tokenDigest);
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://parley.invalid");
    if (!hostAllowed(req)) return plain(res, 403, "Forbidden: unexpected Host header\n");
    if (req.method !== "GET" && req.method !== "HEAD") return plain(res, 405, "Method not allowed\n");
    if (url.pathname === "/health") {
      res.writeHead(200, { "content-type": "application/json", ...SECURITY_HEADERS });
      res.end('{"ok":true}');
      return;
    }
    if (!authorized(req, url)) return plain(res, 401, "Unauthorized: open the URL parley printed (it carries the token)\n");
    if (url.pathname === "/" || url.pathname === "/index.html") {
      const token = url.searchParams.get("token") ?? "";
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", ...SECURITY_HEADERS, "content-security-policy": csp(req) });
      res.end(req.method === "HEAD" ? undefined : pageHtml(token));
      return;
    }
    const asset = assets.get(url.pathname);
    const type = ASSETS[url.pathname];
    if (asset && type) {
      res.writeHead(200, { "content-type": type, "content-length": asset.length, ...SECURITY_HEADERS });
      res.end(req.method === "HEAD" ? undefined : asset);
      return;
    }
    plain(res, 404, "Not found\n");
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxMessageBytes });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => {});
    const url = new URL(req.url ?? "/", "http://parley.invalid");
    const refuse = (status: number, text: string): void => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    if (url.pathname !== "/ws") return refuse(404, "Not Found");
    if (!hostAllowed(req)) return refuse(403, "Forbidden");
    if (!authorized(req, url)) return refuse(401, "Unauthorized");
    // Browsers always send Origin; other clients (a script with the token) may not.
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${req.headers.host ?? ""}` && !options.allowedOrigins.includes(origin)) {
      return refuse(403, "Forbidden");
    }
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      const connection = options.hub.add(ws);
      ws.on("message", (data, isBinary) => {
        const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
        // ws checks text frames' UTF-8 itself (1007); a binary frame is taken as the same JSON text,
        // since some clients send bytes, and one that is not UTF-8 is refused, never ignored.
        const text = isBinary ? utf8OrUndefined(bytes) : bytes.toString("utf8");
        if (text === undefined) connection.refuse("Failed to parse command: a binary WebSocket message must hold UTF-8 JSON text");
        else connection.receive(text);
      });
      ws.on("close", () => connection.close());
      ws.on("error", (error) => {
        options.log(`web: a connection failed: ${error.message}`);
        connection.close();
      });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  if (address && typeof address === "object") port = address.port;
  const shown = urlHost(options.host);
  const hostForUrl = shown.includes(":") ? `[${shown}]` : shown;
  const query = options.token === "" ? "" : `?token=${encodeURIComponent(options.token)}`;
  return {
    url: `http://${hostForUrl}:${port}/${query}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        options.hub.closeAll();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "x-frame-options": "DENY",
};

/** No inline script, no eval, nothing from elsewhere; the WebSocket back to this server only. */
function csp(req: IncomingMessage): string {
  const host = req.headers.host ?? "";
  const ws = /^[A-Za-z0-9.\-:[\]]+$/.test(host) ? ` ws://${host}` : "";
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self'${ws}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** The empty icon keeps browsers from asking for /favicon.ico, which has no token and would log a 401 in the console. */
function pageHtml(token: string): string {
  const q = token === "" ? "" : `?token=${escapeAttribute(encodeURIComponent(token))}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>parley</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/app.css${q}">
<script src="/app.js${q}" defer></script>
</head>
<body>
<noscript>parley's web UI needs JavaScript.</noscript>
</body>
</html>
`;
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", ...SECURITY_HEADERS });
  res.end(text);
}

function escapeAttribute(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

function utf8OrUndefined(bytes: Buffer): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/**
 * The host to print in the URL: the one given, or for a wildcard address (0.0.0.0, ::) one of
 * this machine's external addresses, since the wildcard is for reaching it from elsewhere (the
 * loopback address when it has none).
 */
export function urlHost(host: string, interfaces: ReturnType<typeof networkInterfaces> = networkInterfaces()): string {
  const wildcard = host === "0.0.0.0" ? "IPv4" : host === "::" || host === "[::]" ? "IPv6" : undefined;
  if (!wildcard) return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  const external = Object.values(interfaces)
    .flat()
    .find((a) => a !== undefined && !a.internal && a.family === wildcard && !(a.family === "IPv6" && a.address.startsWith("fe80:")));
  return external?.address ?? (wildcard === "IPv4" ? "127.0.0.1" : "::1");
}

export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  return h === "localhost" || h === "::1" || h === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(h);
}
