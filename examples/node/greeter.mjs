// MCP Apps: a greeting shown in an interactive view (examples/apps/greeter.html), every language's
// example of the extension (its conformance server serves it too). `say_hello` links to the view;
// the view calls `shout` back through the host, a tool only the view may call, so clients that
// render no views never see it.
//
// Run it alone with `node examples/node/greeter.mjs PORT` (Streamable HTTP on 127.0.0.1).
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

import { Server } from 'toolwire'

export const VIEW_URI = 'ui://greeter/view.html'
const VIEW_HTML = new URL('../apps/greeter.html', import.meta.url)

/** The greeter's view and its two tools, on `server`. */
export function addGreeter(server) {
  server.uiResource(VIEW_URI, {
    html: readFileSync(VIEW_HTML, 'utf8'),
    name: 'greeter-view',
    description: 'Shows a greeting, and shouts it on a click',
    prefersBorder: true,
  })
  server.tool('say_hello', {
    description: 'Greets someone by name (in a view, where the client shows them)',
    inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    uiResource: VIEW_URI,
  }, ({ name }, ctx) => {
    const greeting = `Hello, ${name}!`
    // The text is for the model and for clients without views; the view reads the structure.
    if (!ctx.clientRendersApps) return greeting
    return { content: [{ type: 'text', text: greeting }], structuredContent: { greeting, name } }
  })
  server.tool('shout', {
    description: "The text in capitals (called by the greeter's view)",
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    uiResource: VIEW_URI,
    visibility: ['app'],
  }, ({ text }) => {
    const shouted = text.toUpperCase()
    return { content: [{ type: 'text', text: shouted }], structuredContent: { shouted } }
  })
  return server
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const server = addGreeter(new Server({ name: 'greeter', version: '1.0.0' }))
  const http = await server.serveHttp('127.0.0.1', Number(process.argv[2] ?? 8000))
  console.error(`greeter: listening on ${http.url}`)
}
