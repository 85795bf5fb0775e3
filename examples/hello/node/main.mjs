import { server } from './server.mjs'

await server.serveStdio() // until the client hangs up
