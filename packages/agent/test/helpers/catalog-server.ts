/**
 * A stand-in for pi.dev's model catalogue on 127.0.0.1, reached the way both pi 1.6 and parley
 * reach it: through an HTTPS proxy (HTTPS_PROXY, which both honour). The proxy answers CONNECT
 * to pi.dev:443 itself, ending TLS with a certificate for pi.dev signed by a test CA made here
 * with openssl (the children trust it through NODE_EXTRA_CA_CERTS); any other host is refused
 * and recorded. Nothing leaves the machine.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface CatalogRequestSeen {
  path: string;
  headers: IncomingMessage["headers"];
}

export interface CatalogServer {
  /** The environment a child needs to reach it (HTTPS_PROXY, NODE_EXTRA_CA_CERTS). */
  env: Record<string, string>;
  /** Requests that reached pi.dev, in order. */
  requests: CatalogRequestSeen[];
  /** CONNECTs to other hosts (refused). */
  refused: string[];
  /** What answers a request to pi.dev. */
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
}

function makeCertificates(dir: string): { ca: string; key: string; cert: string } {
  const run = (args: string[]): void => {
    execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
  };
  run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=parley test CA"]);
  run(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=pi.dev"]);
  writeFileSync(
    join(dir, "leaf.ext"),
    "subjectAltName=DNS:pi.dev\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
  );
  run(["x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "leaf.pem", "-days", "2", "-extfile", "leaf.ext"]);
  return { ca: join(dir, "ca.pem"), key: readFileSync(join(dir, "leaf.key"), "utf8"), cert: readFileSync(join(dir, "leaf.pem"), "utf8") };
}

export async function startCatalogServer(): Promise<CatalogServer> {
  const dir = mkdtempSync(join(tmpdir(), "parley-catalog-ca-"));
  const { ca, key, cert } = makeCertificates(dir);
  const server: CatalogServer = {
    env: {},
    requests: [],
    refused: [],
    handler: (_req, res) => {
      res.writeHead(404).end();
    },
    close: async () => undefined,
  };
  const site = createHttpsServer({ key, cert }, (req, res) => {
    server.requests.push({ path: req.url ?? "", headers: req.headers });
    server.handler(req, res);
  });
  const proxy = createHttpServer((_req, res) => {
    res.writeHead(405).end();
  });
  const sockets = new Set<import("node:stream").Duplex>();
  proxy.on("connect", (req, socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    if (req.url !== "pi.dev:443") {
      server.refused.push(req.url ?? "");
      socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    site.emit("connection", socket);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const { port } = proxy.address() as AddressInfo;
  server.env = { HTTPS_PROXY: `http://127.0.0.1:${port}`, NODE_EXTRA_CA_CERTS: ca };
  server.close = async () => {
    for (const socket of sockets) socket.destroy();
    proxy.closeAllConnections();
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  };
  return server;
}
