import { Server } from 'toolwire'
import { z } from 'zod'

export const server = new Server({ name: 'travel', version: '1.0.0' })
const confirm = { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] }

server.tool(
  'book',
  { description: 'Books a hotel once the user confirms the price.', inputSchema: { city: z.string(), nights: z.number().int() } },
  async ({ city, nights }, ctx) => {
    ctx.log('info', { searching: city }) // a log message, at the level the client set
    for (const [step, doing] of ['searching', 'comparing', 'holding a room'].entries()) {
      ctx.progress(step + 1, 3, doing) // sent if the client asked for progress
    }
    // Asks the user through the client; a cancelled call aborts ctx.signal, and this rejects.
    const answer = await ctx.elicit({ message: `Book ${nights} nights in ${city} for 480 EUR?`, requestedSchema: confirm })
    if (answer.action !== 'accept' || !answer.content.confirm) return 'Not booked.'
    return `Booked ${nights} nights in ${city}.`
  },
)
