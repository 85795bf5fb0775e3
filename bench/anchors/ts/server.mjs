// Benchmark anchor: the official TypeScript SDK's McpServer with zod schemas, on stdio, or on
// Streamable HTTP with `--http PORT` (the SDK's documented stateful setup: one transport and
// McpServer per session, on its Express app; JSON answers, its fastest mode).
// Tools: echo, sleep (the slow tool), and tool_000..tool_099, as in toolwire's demo.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

function buildServer() {
  const server = new McpServer({ name: "anchor-ts", version: "1.0.0" });

  server.registerTool(
    "echo",
    { description: "Returns the text it is given.", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );

  server.registerTool(
    "sleep",
    { description: "Waits ms milliseconds.", inputSchema: { ms: z.number().int().min(0).max(60000) } },
    async ({ ms }) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { content: [{ type: "text", text: `slept ${ms} ms` }] };
    },
  );

  for (let i = 0; i < 100; i++) {
    const name = `tool_${String(i).padStart(3, "0")}`;
    server.registerTool(
      name,
      {
        description: `Extra tool number ${i} (benchmarks tools/list).`,
        inputSchema: { q: z.string(), n: z.number().int().min(0).optional() },
      },
      async ({ q }) => ({ content: [{ type: "text", text: q }] }),
    );
  }

  if (process.argv.includes("--bench-tools")) addBenchTools(server);
  return server;
}

// The tools of bench/payloads (`--bench-tools`), as in toolwire's demos. McpServer validates
// with zod, not with a JSON Schema: validate_big's schema is zod's own conversion of
// bench/schemas/big.json (z.fromJSONSchema), and what tools/list shows is zod's rendering of it.
const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
const BIG = JSON.parse(readFileSync(new URL("../../schemas/big.json", import.meta.url), "utf8"));

// Characters (code points) without spreading the text into an array of them, which for 1 MiB
// costs more than the call it measures: a surrogate pair is one character.
function codePoints(text) {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit < 0xdc00) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next < 0xe000) {
        count--;
        i++
      }
    }
  }
  return count;
}

function addBenchTools(server) {
  const bytes = { bytes: z.number().int().min(0).max(64 * 1024 * 1024) };
  server.registerTool(
    "take_text",
    { description: "Answers the length in characters of the text it is given.", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text: String(codePoints(text)) }] }),
  );
  server.registerTool("give_text", { description: "Answers a text of that many ASCII bytes.", inputSchema: bytes }, async ({ bytes }) => ({
    content: [{ type: "text", text: ALPHABET.repeat(Math.floor(bytes / ALPHABET.length) + 1).slice(0, bytes) }],
  }));
  const item = z.object({ id: z.number().int(), name: z.string(), tags: z.array(z.string()) });
  server.registerTool(
    "give_structured",
    { description: "Answers structured content of about that many bytes.", inputSchema: bytes, outputSchema: { items: z.array(item) } },
    async ({ bytes }) => {
      const items = [];
      for (let n = 0; n < Math.floor(bytes / 64); n++) {
        items.push({ id: n, name: `item-${String(n).padStart(6, "0")}`, tags: ["alpha", "beta", "gamma"] });
      }
      const structuredContent = { items };
      // The SDK adds no text block for older clients: written here, as the spec asks.
      return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent };
    },
  );
  server.registerTool(
    "validate_big",
    { description: "Checks an order against a large schema; answers its line count.", inputSchema: z.fromJSONSchema(BIG) },
    async ({ order }) => ({ content: [{ type: "text", text: `lines=${order.lines.length}` }] }),
  );
  server.registerTool(
    "validate_small",
    { description: "A trivial schema; answers ok.", inputSchema: z.object({ text: z.string() }).passthrough() },
    async () => ({ content: [{ type: "text", text: "ok" }] }),
  );
}

const httpAt = process.argv.indexOf("--http");
if (httpAt < 0) {
  await buildServer().connect(new StdioServerTransport());
} else {
  const port = Number(process.argv[httpAt + 1]);
  const app = createMcpExpressApp();
  const transports = new Map();
  app.post("/mcp", async (req, res) => {
    const id = req.headers["mcp-session-id"];
    let transport = id ? transports.get(id) : undefined;
    if (!transport && !id && isInitializeRequest(req.body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (sessionId) => transports.set(sessionId, transport),
      });
      transport.onclose = () => transport.sessionId && transports.delete(transport.sessionId);
      await buildServer().connect(transport);
    }
    if (!transport) {
      res.status(id ? 404 : 400).json({ jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: no valid session" }, id: null });
      return;
    }
    await transport.handleRequest(req, res, req.body);
  });
  // The standalone SSE stream (GET) and the end of a session (DELETE), as in the SDK's own
  // stateful example: the session's transport answers both.
  const sessionRequest = async (req, res) => {
    const id = req.headers["mcp-session-id"];
    const transport = id ? transports.get(id) : undefined;
    if (!transport) {
      res.status(id ? 404 : 400).json({ jsonrpc: "2.0", error: { code: -32000, message: "Bad Request: no valid session" }, id: null });
      return;
    }
    await transport.handleRequest(req, res);
  };
  app.get("/mcp", sessionRequest);
  app.delete("/mcp", sessionRequest);
  const listener = app.listen(port, "127.0.0.1", () => {
    process.stderr.write(`anchor-ts: listening on http://127.0.0.1:${port}/mcp\n`);
  });
  // Answers are small writes that must not wait for Nagle's timer.
  listener.on("connection", (socket) => socket.setNoDelay(true));
  process.on("SIGTERM", () => listener.close(() => process.exit(0)));
}
