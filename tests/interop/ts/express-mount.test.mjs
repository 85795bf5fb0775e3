// toolwire's Streamable HTTP endpoint mounted in an Express app of the test's own
// (`app.all('/mcp', server.httpHandler())`, as the TypeScript SDK's transport plugs into
// Express), driven by the official TypeScript SDK client: the app's own route beside it, a tool
// call with progress and a resource read, with the body parsed by express.json() (/mcp) or
// streamed to the engine (/raw, mounted before the parser).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import express from "express";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { Server } from "../../../bindings-node/lib/index.mjs"; // a user's: from 'toolwire'

const events = [];
const server = new Server({
  name: "express-weather",
  version: "1.0.0",
  async *lifespan() {
    events.push("lifespan started");
    try {
      yield { station: "Blindern" };
    } finally {
      events.push("lifespan ended");
    }
  },
})
  .tool(
    "forecast",
    { description: "Forecast for a city", inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
    async ({ city }, ctx) => {
      ctx.progress(1, 2, "fetching");
      await new Promise((resolve) => setImmediate(resolve));
      ctx.progress(2, 2, "done");
      return `${city}: sunny (station ${ctx.lifespanContext.station})`;
    },
  )
  .resource("weather://stations", { name: "stations", mimeType: "text/plain" }, () => "Blindern, Flesland");

const mcp = server.httpHandler();
let listener;
let base;

before(async () => {
  const app = express();
  app.use("/raw", mcp); // before the body parser: the body streams to the engine
  app.use(express.json());
  app.get("/health", (_req, res) => res.json({ status: "ok" }));
  app.all("/mcp", mcp);
  listener = app.listen(0, "127.0.0.1");
  await once(listener, "listening");
  base = `http://127.0.0.1:${listener.address().port}`;
});

after(async () => {
  listener.closeAllConnections();
  listener.close();
  await mcp.close();
  assert.deepEqual(events, ["lifespan started", "lifespan ended"]);
});

async function connect(path) {
  const client = new Client({ name: "toolwire-interop-express", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}${path}`)));
  return client;
}

test("the app's own route answers beside the mounted endpoint", async () => {
  const health = await fetch(`${base}/health`);
  assert.deepEqual(await health.json(), { status: "ok" });
});

for (const path of ["/mcp", "/raw"]) {
  test(`the TypeScript SDK client at ${path}: a tool call with progress and a resource read`, async () => {
    const client = await connect(path);
    try {
      assert.equal(client.getServerVersion().name, "express-weather");
      assert.match(client.transport.sessionId, /^[0-9a-f]{32}$/);
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ["forecast"]);
      const progress = [];
      const result = await client.callTool({ name: "forecast", arguments: { city: "Oslo" } }, undefined, {
        onprogress: (p) => progress.push(p),
      });
      assert.equal(result.content[0].text, "Oslo: sunny (station Blindern)");
      assert.deepEqual(progress, [
        { progress: 1, total: 2, message: "fetching" },
        { progress: 2, total: 2, message: "done" },
      ]);
      const read = await client.readResource({ uri: "weather://stations" });
      assert.deepEqual(read.contents, [{ uri: "weather://stations", mimeType: "text/plain", text: "Blindern, Flesland" }]);
      await client.transport.terminateSession();
    } finally {
      await client.close();
    }
  });
}
