/**
 * The coding-agent messages the loop carries besides pi-ai's three (as pi declares them): the
 * protocol's shapes, registered with pi-agent-core so its AgentMessage is the wire's.
 */
import type { BashExecutionMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage, SystemMessage } from "@parley/protocol";

declare module "@earendil-works/pi-agent-core" {
  interface CustomAgentMessages {
    bashExecution: BashExecutionMessage;
    custom: CustomMessage;
    branchSummary: BranchSummaryMessage;
    compactionSummary: CompactionSummaryMessage;
    /** The newest pi's system prompt in the transcript: kept as read from its sessions, never sent to the model. */
    system: SystemMessage;
  }
}
