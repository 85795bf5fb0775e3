import { ResourceNotFound, Server } from 'toolwire'
import { z } from 'zod'

export const server = new Server({ name: 'notes', version: '1.0.0' })
const notes = new Map([
  ['2026-11-22', 'Busy: three meetings.'],
  ['2026-11-23', 'Quiet.'],
])

server.resource('notes://readme', { mimeType: 'text/plain' }, () => 'One note a day, at notes://day/{date}.')

// A template: its variables come as the second argument.
server.resource('notes://day/{date}', { name: 'notes of a day', mimeType: 'text/plain' }, (_uri, { date }) => {
  if (!notes.has(date)) throw new ResourceNotFound(`no notes on ${date}`) // the client gets -32002
  return notes.get(date)
})

server.completion({ template: 'notes://day/{date}' }, (_argument, value) =>
  [...notes.keys()].filter((date) => date.startsWith(value)),
)

server.prompt(
  'summarize',
  {
    description: "Summarize a day's notes.",
    argsSchema: {
      date: z.string().describe('The day, as YYYY-MM-DD.'),
      tone: z.enum(['short', 'detailed']).optional().describe('How long the summary may be.'),
    },
  },
  ({ date, tone = 'short' }) => `Summarize the notes of ${date} (${tone}): ${notes.get(date) ?? 'none'}`,
)
