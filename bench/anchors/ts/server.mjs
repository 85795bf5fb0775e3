// Benchmark anchor: the official TypeScript SDK's McpServer with zod schemas, on stdio.
// Tools: echo, sleep (the slow tool), and tool_000..tool_099, as in toolwire's demo.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

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

await server.connect(new StdioServerTransport());
