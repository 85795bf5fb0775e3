// The conformance server's tasks-extension fixtures with JavaScript handlers (the alpha
// harness's tasks-* scenarios). Nothing in them knows about tasks: each is marked with how it
// may run, the engine decides when a call becomes a task, and inside one `await ctx.elicit(...)`
// waits for the client's tasks/update.
import { setTimeout as delay } from 'node:timers/promises'

import { InputRequired, ProtocolError } from 'toolwire'

import { acceptedContent } from './conformance-modern.mjs'

const noArgs = { type: 'object', properties: {} }
const form = (message, properties, required = []) => ({
  mode: 'form',
  message,
  requestedSchema: { type: 'object', properties, required },
})

export function addTaskFixtures(server) {
  server
    .tool(
      'greet',
      { description: 'Greets by name', inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
      ({ name }) => `Hello, ${name}!`,
    )
    .tool(
      'slow_compute',
      {
        description: 'Computes for the given number of seconds',
        inputSchema: { type: 'object', properties: { seconds: { type: 'integer', minimum: 0 }, label: { type: 'string' } } },
        taskSupport: 'optional',
      },
      async ({ seconds = 0, label = 'default' }, ctx) => {
        // Cancelling the task aborts ctx.signal: the wait ends with it.
        await delay(seconds * 1000, undefined, { signal: ctx.signal })
        return `Computation "${label}" completed after ${seconds}s`
      },
    )
    .tool(
      'failing_job',
      { description: 'Runs a second, then fails (a tool error: the task completes)', inputSchema: noArgs, taskSupport: 'required' },
      async () => {
        await delay(1000)
        throw new Error('failing_job always fails')
      },
    )
    .tool(
      'protocol_error_job',
      { description: 'Fails with a JSON-RPC error (the task fails)', inputSchema: noArgs, taskSupport: 'required' },
      () => {
        throw new ProtocolError(-32603, 'protocol_error_job: internal failure')
      },
    )
    .tool(
      'confirm_delete',
      {
        description: 'Asks for confirmation before deleting a file',
        inputSchema: { type: 'object', properties: { filename: { type: 'string' } }, required: ['filename'] },
        taskSupport: 'optional',
      },
      async ({ filename }, ctx) => {
        const answer = await ctx.elicit(form(`Delete ${filename}?`, { confirm: { type: 'boolean' } }, ['confirm']))
        return acceptedContent(answer)?.confirm ? `Deleted ${filename}` : `Kept ${filename}`
      },
    )
    .tool('multi_input', { description: 'Asks two questions at once', inputSchema: noArgs, taskSupport: 'optional' }, async (_args, ctx) => {
      const [name] = await ctx.askAll([
        ['elicitation/create', form('Your name?', { name: { type: 'string' } })],
        ['elicitation/create', form('Proceed?', { confirm: { type: 'boolean' } })],
      ])
      return `Got both answers (${acceptedContent(name)?.name ?? '?'})`
    })
    .tool(
      'test_tool_with_task',
      { description: 'Asks for a name (an MRTR round), then greets as a task', inputSchema: noArgs, taskSupport: 'required' },
      (_args, ctx) => {
        const content = acceptedContent(ctx.inputResponses.user_name)
        if (!content?.name) {
          return new InputRequired().elicit('user_name', form('What is your name?', { name: { type: 'string' } }, ['name']))
        }
        return `Hello, ${content.name}!`
      },
    )
}
