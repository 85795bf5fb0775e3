import { Server } from 'toolwire'
import { z } from 'zod'

export const server = new Server({ name: 'hello', version: '1.0.0' })

server.tool('greet', { description: 'Greets someone by name.', inputSchema: { name: z.string() } }, ({ name }) => `Hello, ${name}!`)
