/** JSON lines over Node streams (a pipe, a socket, a child's stdio). */
import { attachJsonlReader } from "@parley/protocol/jsonl";
import { ProtocolError, type CloseInfo } from "./errors.js";
import { TransportBase } from "./transport.js";

export interface StreamTransportOptions {
  /** Lines longer than this many bytes are discarded and reported as a ProtocolError (default: the protocol's 128 MiB). */
  maxLineBytes?: number;
  /** End `output` when the transport closes (default true). */
  endOutputOnClose?: boolean;
}

/**
 * JSON lines over any Readable (records in) and Writable (records out), framed by the
 * protocol's JSONL reader: LF only, a trailing CR stripped, U+2028/U+2029 kept.
 * Closes (reason "remote") when `input` ends or errors.
 */
export class StreamTransport extends TransportBase {
  readonly #input: NodeJS.ReadableStream;
  readonly #output: NodeJS.WritableStream;
  readonly #endOutput: boolean;
  readonly #detach: () => void;
  readonly #onInputError: (error: Error) => void;
  readonly #onOutputError: (error: Error) => void;

  constructor(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, options: StreamTransportOptions = {}) {
    super();
    this.#input = input;
    this.#output = output;
    this.#endOutput = options.endOutputOnClose ?? true;
    this.#detach = attachJsonlReader(input, (line) => this.receiveLine(line), {
      ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
      onOverflow: ({ bytes, maxLineBytes }) =>
        this.reportProtocolError(new ProtocolError(`The agent wrote a line of ${bytes} bytes; the limit is ${maxLineBytes}`)),
      onEnd: () => this.#finish({ reason: "remote" }),
    });
    this.#onInputError = (error) => this.#finish({ reason: "error", error });
    // A write to a closed pipe (EPIPE) is reported here; the read side decides when we are closed.
    this.#onOutputError = () => {};
    input.on("error", this.#onInputError);
    output.on("error", this.#onOutputError);
    this.markOpen();
  }

  protected writeLine(line: string): void {
    this.#output.write(line);
  }

  close(): Promise<void> {
    this.#finish({ reason: "local" });
    return this.closed.then(() => undefined);
  }

  #finish(info: CloseInfo): void {
    if (this.isClosed) return;
    this.#detach();
    this.#input.off("error", this.#onInputError);
    this.markClosed(info);
    if (this.#endOutput) this.#output.end();
  }
}
