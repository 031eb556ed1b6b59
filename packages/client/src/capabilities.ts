/**
 * What the agent on the other end supports beyond pi's protocol. parley answers
 * `get_ui_state` and writes `extension_ui_dismissed` / `extension_ui_error`; pi 0.73 answers
 * `Unknown command: get_ui_state` and writes neither. Everything in this package works
 * against both: without dismiss records a dialog still ends at its deadline, tracked here.
 */
import type { GetUiStateData } from "@parley/protocol";
import { RpcError } from "./errors.js";
import type { RequestOptions } from "./requests.js";

/** What the probe needs of a client (an `RpcClient` is one); narrow, so this module does not import the client back. */
export interface UiStateSource {
  getUiState(options?: RequestOptions): Promise<GetUiStateData>;
}

export interface Capabilities {
  /** The agent answers `get_ui_state` (late attach and reconnect can restore the UI). */
  uiState: boolean;
  /** The agent announces dialogs it ended (`extension_ui_dismissed`) and refused answers (`extension_ui_error`). */
  dismissRecords: boolean;
}

export interface DetectedCapabilities extends Capabilities {
  /** The get_ui_state data when the agent answered it (a UiStore attached to the client has applied it already). */
  uiStateData?: GetUiStateData;
}

/**
 * Probes with one `get_ui_state` request. An "Unknown command" error means a pi-compatible
 * agent without parley's additions; any other failure (closed, timed out) is thrown.
 */
export async function detectCapabilities(client: UiStateSource, options?: RequestOptions): Promise<DetectedCapabilities> {
  try {
    const data = await client.getUiState(options);
    return { uiState: true, dismissRecords: true, uiStateData: data };
  } catch (error) {
    if (error instanceof RpcError && error.isUnknownCommand) return { uiState: false, dismissRecords: false };
    throw error;
  }
}
