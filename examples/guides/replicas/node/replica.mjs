import { Server } from 'toolwire'
import { z } from 'zod'

const confirm = { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] }

/** One replica: every replica gets the same Redis and the same requestState keys. */
export function replica(redisUrl, stateKeys) {
  const server = new Server({ name: 'archive', version: '1.0.0', redis: redisUrl, requestStateKeys: stateKeys })
  server.tool(
    'archive',
    { description: 'Archives a folder once the user confirms.', inputSchema: { folder: z.string() }, taskSupport: 'optional' },
    async ({ folder }, ctx) => {
      const answer = await ctx.elicit({ message: `Archive ${folder}?`, requestedSchema: confirm })
      return answer.action === 'accept' && answer.content.confirm ? `Archived ${folder}.` : `${folder} left as it was.`
    },
  )
  return server
}
