import { fileURLToPath } from 'node:url'

import { Server } from 'toolwire'
import { z } from 'zod'

export const server = new Server({ name: 'notes', version: '1.0.0' })
const notes = []

server.tool('add_note', { description: 'Adds a note.', inputSchema: { text: z.string() } }, ({ text }, ctx) => {
  ctx.progress(1, 1, 'saved') // on the call's SSE stream, when the client asked for progress
  notes.push(text)
  return `${notes.length} notes`
})

// Run as a program: the engine serves HTTP itself at http://127.0.0.1:8000/mcp until close().
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const http = await server.serveHttp('127.0.0.1', 8000)
  console.log(`serving ${http.url}`)
}
