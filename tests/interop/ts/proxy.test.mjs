// A toolwire gateway (the Node binding) proxying a server written with the official TypeScript
// SDK (ts-sdk-upstream.mjs, spawned over stdio), driven over Streamable HTTP by the official
// TypeScript SDK client: official client → toolwire → official server. Names and URIs prefixed,
// progress and elicitation relayed both ways, the upstream dying mid-call reported and spawned
// again on the next call.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { Server } from "../../../bindings-node/lib/index.mjs"; // a user's: from 'toolwire'

const UPSTREAM = fileURLToPath(new URL("./ts-sdk-upstream.mjs", import.meta.url));

let gateway;
let mount;
let http;
before(async () => {
  gateway = new Server({ name: "gateway", version: "1.0.0" });
  mount = await gateway.mount("ts", { command: process.execPath, args: [UPSTREAM] });
  http = await gateway.serveHttp("127.0.0.1", 0);
});
after(async () => {
  await http?.close();
  await mount?.unmount(); // the spawned server ends with it
});

async function connect() {
  const client = new Client(
    { name: "toolwire-interop-proxy", version: "1.0.0" },
    { capabilities: { elicitation: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    assert.equal(request.params.message, "Your name?");
    return { action: "accept", content: { name: "Ada" } };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
  return client;
}

test("the upstream's catalog is listed under the prefix", async () => {
  const client = await connect();
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ["ts_ask_name", "ts_count", "ts_die", "ts_echo"]);
    const echo = tools.find((t) => t.name === "ts_echo");
    assert.equal(echo.description, "Returns the text it is given.");
    assert.deepEqual(echo.inputSchema.required, ["text"]);
    const { resources } = await client.listResources();
    assert.deepEqual(resources.map((r) => r.uri), ["docs://ts/readme"]);
    const { prompts } = await client.listPrompts();
    assert.deepEqual(prompts.map((p) => p.name), ["ts_brief"]);
  } finally {
    await client.close();
  }
});

test("calls, progress, elicitation, reads and prompts are forwarded", async () => {
  const client = await connect();
  try {
    const echo = await client.callTool({ name: "ts_echo", arguments: { text: "hi" } });
    assert.equal(echo.content[0].text, "ts echo: hi");
    const heard = [];
    const counted = await client.callTool({ name: "ts_count", arguments: { n: 3 } }, undefined, {
      onprogress: ({ message }) => heard.push(message),
    });
    assert.equal(counted.content[0].text, "counted to 3");
    assert.deepEqual(heard, ["step 1", "step 2", "step 3"]);
    const asked = await client.callTool({ name: "ts_ask_name", arguments: {} });
    assert.equal(asked.content[0].text, "hello, Ada");
    const read = await client.readResource({ uri: "docs://ts/readme" });
    assert.equal(read.contents[0].text, "Read me, from the TypeScript SDK.");
    assert.equal(read.contents[0].uri, "docs://ts/readme");
    const prompt = await client.getPrompt({ name: "ts_brief", arguments: { city: "Oslo" } });
    assert.equal(prompt.messages[0].content.text, "Brief me on Oslo.");
  } finally {
    await client.close();
  }
});

test("an upstream that dies mid-call fails that call, and the next call spawns it again", async () => {
  const client = await connect();
  try {
    const died = await client.callTool({ name: "ts_die", arguments: {} });
    assert.equal(died.isError, true);
    assert.match(died.content[0].text, /ts-sdk-upstream\.mjs` \(spawned\) went away before answering/);
    const again = await client.callTool({ name: "ts_echo", arguments: { text: "again" } });
    assert.equal(again.content[0].text, "ts echo: again");
  } finally {
    await client.close();
  }
});
