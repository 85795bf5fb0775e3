// The forecast server of issue #28 with the official TypeScript SDK (McpServer, zod), as its
// users write it; toolwire-app.mjs is the same server with toolwire. forecast.test.mjs compares
// their tools/list (tools-list.json says what differs and why).
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'

const stations = { no: { oslo: 'Blindern' }, fr: { paris: 'Montsouris' } }

export const server = new McpServer({ name: 'weather', version: '1.0.0' })

server.registerTool(
  'forecast',
  {
    description: 'Daily forecast for a city.',
    inputSchema: {
      city: z.string().min(1).describe('City name, e.g. Oslo'),
      days: z.number().int().min(1).max(7).default(3).describe('How many days, 1 to 7'),
    },
    outputSchema: { city: z.string(), station: z.string(), highs: z.array(z.number()).describe('Daily highs in °C') },
  },
  async ({ city, days }, extra) => {
    const station = Object.values(stations).map((byCity) => byCity[city.toLowerCase()]).find(Boolean)
    if (station === undefined) return { content: [{ type: 'text', text: `No station for ${city}` }], isError: true }
    for (let day = 1; day <= days; day++) {
      const progressToken = extra._meta?.progressToken
      if (progressToken !== undefined) {
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: day, total: days, message: `day ${day}` } })
      }
    }
    const result = { city, station, highs: Array.from({ length: days }, (_, day) => 20 + day) }
    return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result }
  },
)

server.registerResource(
  'stations',
  new ResourceTemplate('weather://stations/{country}', { list: undefined }),
  { description: 'The weather stations of a country (ISO code), one per line.', mimeType: 'text/plain' },
  async (uri, { country }) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: Object.entries(stations[country] ?? {}).map(([c, n]) => `${c}: ${n}`).join('\n') }],
  }),
)

server.registerPrompt(
  'plan_trip',
  { description: 'Plan a trip around the weather.', argsSchema: { city: z.string(), days: z.string().optional() } },
  ({ city, days }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Plan ${days ?? '3'} days in ${city} around the forecast.` } }] }),
)
