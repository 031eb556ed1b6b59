/** Wraps a transport and keeps a copy of every record the client sends through it. */
import type { AgentRecord, CloseInfo, Disposable, ProtocolError, Transport } from "../../src/index.js";

export class RecordingTransport implements Transport {
  readonly sent: Array<Record<string, unknown>> = [];

  constructor(readonly inner: Transport) {}

  get opened(): Promise<void> {
    return this.inner.opened;
  }
  get closed(): Promise<CloseInfo> {
    return this.inner.closed;
  }
  get isClosed(): boolean {
    return this.inner.isClosed;
  }
  send(record: object): void {
    this.inner.send(record);
    this.sent.push(JSON.parse(JSON.stringify(record)) as Record<string, unknown>);
  }
  onRecord(listener: (record: AgentRecord) => void): Disposable {
    return this.inner.onRecord(listener);
  }
  onProtocolError(listener: (error: ProtocolError) => void): Disposable {
    return this.inner.onProtocolError(listener);
  }
  onClose(listener: (info: CloseInfo) => void): Disposable {
    return this.inner.onClose(listener);
  }
  close(): Promise<void> {
    return this.inner.close();
  }

  uiResponses(): Array<Record<string, unknown>> {
    return this.sent.filter((r) => r["type"] === "extension_ui_response");
  }
}
