/**
 * `parley --mode rpc`: parse flags, load extensions, serve RPC on stdio until stdin ends.
 * stdout carries protocol records only; everything for humans goes to stderr.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { discoverExtensions, loadExtension } from "../extensions/loader.js";
import { RpcServer, type ExtensionSource } from "../rpc/server.js";
import { StdioTransport } from "../transport/stdio.js";
import { parseArgs, resolveExtensionFlags, USAGE, UsageError, type CliOptions } from "./args.js";

const log = (message: string): void => {
  process.stderr.write(`parley: ${message}\n`);
};

function version(): string {
  const pkg = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "package.json");
  return (JSON.parse(readFileSync(pkg, "utf8")) as { version: string }).version;
}

async function loadAll(options: CliOptions): Promise<ExtensionSource[]> {
  const sources: ExtensionSource[] = [];
  const discovered = options.noExtensions ? [] : discoverExtensions(process.cwd());
  for (const { path, scope } of discovered) sources.push({ ...(await loadExtension(path)), scope });
  for (const path of options.extensions) sources.push({ ...(await loadExtension(path)), scope: "temporary" });
  return sources;
}

export async function main(argv: string[]): Promise<void> {
  let options: CliOptions;
  try {
    options = parseArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    log(`${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (options.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (options.version) {
    process.stdout.write(`${version()}\n`);
    return;
  }

  const extensions = await loadAll(options);
  for (const ext of extensions) if (ext.error !== undefined) log(ext.error);

  const transport = new StdioTransport({
    ...(options.maxLineBytes !== undefined ? { maxLineBytes: options.maxLineBytes } : {}),
    // The client closed our stdout: nobody can hear us, so finish quietly.
    onOutputClosed: () => void server.shutdown().then(() => process.exit(0)),
  });
  const server = new RpcServer({
    transport,
    cwd: process.cwd(),
    extensions,
    log,
    ...(options.name !== undefined ? { sessionName: options.name } : {}),
  });

  await server.loadExtensions();
  try {
    // Only now are the extensions' flags known, so only now can unknown options be judged.
    server.setExtensionFlags(resolveExtensionFlags(options, server.runtime.flags));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    log(`${error.message}\n\n${USAGE}`);
    process.exit(2);
  }

  // Third-party code must not take the agent down: report what escapes it, keep serving.
  process.on("uncaughtException", (error) => server.reportError({ extensionPath: "<unknown>", event: "uncaughtException", error: error.message, stack: error.stack }));
  process.on("unhandledRejection", (reason) =>
    server.reportError({ extensionPath: "<unknown>", event: "unhandledRejection", error: reason instanceof Error ? reason.message : String(reason) }),
  );
  for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130], ["SIGHUP", 129]] as const) {
    process.once(signal, () => void server.shutdown().then(() => process.exit(code)));
  }

  void server.closed.then(() => process.exit(0));
  await server.begin();
}
