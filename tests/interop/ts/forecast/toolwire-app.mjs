// The forecast server of issue #28 with toolwire, written as a user of the official TypeScript
// SDK would (zod shapes for tool inputs, outputs and prompt arguments); sdk-app.mjs is the same
// server with the SDK. forecast.test.mjs compares their tools/list (tools-list.json says what
// differs and why) and tests this one with toolwire/testing's client.
import { Server } from '../../../../bindings-node/lib/index.mjs' // a user's: from 'toolwire'
import { z } from 'zod'

export const server = new Server({
  name: 'weather',
  version: '1.0.0',
  // What the handlers share (a database pool in a real server); ended by server.close().
  async *lifespan() {
    const stations = { byCountry: { no: { oslo: 'Blindern' }, fr: { paris: 'Montsouris' } }, closed: false }
    try {
      yield stations
    } finally {
      stations.closed = true
    }
  },
})

server.tool(
  'forecast',
  {
    description: 'Daily forecast for a city.',
    inputSchema: {
      city: z.string().min(1).describe('City name, e.g. Oslo'),
      days: z.number().int().min(1).max(7).default(3).describe('How many days, 1 to 7'),
    },
    outputSchema: { city: z.string(), station: z.string(), highs: z.array(z.number()).describe('Daily highs in °C') },
  },
  async ({ city, days }, ctx) => {
    const station = Object.values(ctx.lifespanContext.byCountry).map((byCity) => byCity[city.toLowerCase()]).find(Boolean)
    if (station === undefined) throw new Error(`No station for ${city}`)
    for (let day = 1; day <= days; day++) ctx.progress(day, days, `day ${day}`)
    return { city, station, highs: Array.from({ length: days }, (_, day) => 20 + day) }
  },
)

server.resource(
  'weather://stations/{country}',
  { name: 'stations', description: 'The weather stations of a country (ISO code), one per line.', mimeType: 'text/plain' },
  (_uri, { country }, round) =>
    Object.entries(round.lifespanContext.byCountry[country] ?? {})
      .map(([city, name]) => `${city}: ${name}`)
      .join('\n'),
)

server.prompt(
  'plan_trip',
  { description: 'Plan a trip around the weather.', argsSchema: { city: z.string(), days: z.string().optional() } },
  ({ city, days }) => `Plan ${days ?? '3'} days in ${city} around the forecast.`,
)
