import { Server } from 'toolwire'
import { z } from 'zod'

// Finished tasks are kept 15 minutes for their clients to fetch (default: an hour), and clients
// are told to poll every 100 ms: a confirmation is quick (default: every second).
export const server = new Server({ name: 'archive', version: '1.0.0', taskTtlMs: 15 * 60_000, taskPollIntervalMs: 100 })
const confirm = { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] }

server.tool(
  'archive',
  // A task for clients that can follow one.
  { description: 'Archives a folder once the user confirms.', inputSchema: { folder: z.string() }, taskSupport: 'optional' },
  async ({ folder }, ctx) => {
    const answer = await ctx.elicit({ message: `Archive ${folder}?`, requestedSchema: confirm })
    if (answer.action !== 'accept' || !answer.content.confirm) return `${folder} left as it was.`
    ctx.progress(1, 2, 'packing') // in a task: its status message
    return `Archived ${folder}.`
  },
)
