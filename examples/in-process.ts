// parley in the same process: docs/sdk.md's example, type-checked by `npm test` (examples/tsconfig.json);
// scripts/test/docs.test.ts checks that docs/sdk.md shows this code as it is here.
import { RpcServer, inProcessTransportPair } from "@parley/agent";
import { RpcClient } from "@parley/client";

const { client: clientEnd, agent: agentEnd } = inProcessTransportPair();
const server = new RpcServer({ transport: agentEnd, cwd: process.cwd() });
void server.closed.then(() => agentEnd.close()); // the client sees the agent go
const client = new RpcClient(clientEnd);
await server.start();
client.ui.handle("confirm", async () => true); // say yes to every confirm dialog
console.log((await client.run("hello")).text);
await client.close(); // the server shuts down: dialogs dismissed, session_shutdown run
