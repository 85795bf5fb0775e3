// A server written with the official MCP TypeScript SDK (npm @modelcontextprotocol/sdk), served
// over stdio, for toolwire to proxy (proxy.test.mjs): echo, progress, elicitation, a tool whose
// process dies in the middle of its call, a resource and a prompt.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "ts-sdk-upstream", version: "1.0.0" });

server.registerTool(
  "echo",
  { description: "Returns the text it is given.", inputSchema: { text: z.string() } },
  async ({ text }) => ({ content: [{ type: "text", text: `ts echo: ${text}` }] }),
);

server.registerTool(
  "count",
  { description: "Counts to n, reporting each step as progress.", inputSchema: { n: z.number().int() } },
  async ({ n }, extra) => {
    const progressToken = extra._meta?.progressToken;
    for (let step = 1; step <= n; step++) {
      if (progressToken !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken, progress: step, total: n, message: `step ${step}` },
        });
      }
    }
    return { content: [{ type: "text", text: `counted to ${n}` }] };
  },
);

server.registerTool("ask_name", { description: "Asks the user for their name." }, async (extra) => {
  const answer = await server.server.elicitInput(
    { message: "Your name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } },
    { relatedRequestId: extra.requestId },
  );
  const text = answer.action === "accept" ? `hello, ${answer.content.name}` : `no name (${answer.action})`;
  return { content: [{ type: "text", text }] };
});

server.registerTool("die", { description: "Its process exits in the middle of the call." }, async (extra) => {
  const progressToken = extra._meta?.progressToken;
  if (progressToken !== undefined) {
    await extra.sendNotification({
      method: "notifications/progress",
      params: { progressToken, progress: 1, total: 2, message: "about to die" },
    });
  }
  process.exit(3);
});

server.registerResource("readme", "docs://readme", { mimeType: "text/plain" }, async (uri) => ({
  contents: [{ uri: uri.href, mimeType: "text/plain", text: "Read me, from the TypeScript SDK." }],
}));

server.registerPrompt("brief", { description: "A briefing on a city.", argsSchema: { city: z.string() } }, ({ city }) => ({
  messages: [{ role: "user", content: { type: "text", text: `Brief me on ${city}.` } }],
}));

await server.connect(new StdioServerTransport());
