// The conformance server's 2026-07-28 fixtures with JavaScript handlers: MRTR rounds written
// both ways (returning InputRequired, and `await ctx.elicit(...)` that asks and comes back), the
// per-request capability and log level, the list-change triggers, and a tool whose argument is
// mirrored in an Mcp-Param-Region header.
import { InputRequired } from 'toolwire'

const noArgs = { type: 'object', properties: {} }
const ask = (message, field, type = 'string') => ({
  message,
  requestedSchema: { type: 'object', properties: { [field]: { type } }, required: [field] },
})
const sampling = (text, maxTokens) => ({ messages: [{ role: 'user', content: { type: 'text', text } }], maxTokens })
/** An accepted elicitation's content under `key`, if there is one. */
/** An elicitation answer's content, if the user accepted. */
export const acceptedContent = (answer) =>
  answer && typeof answer === 'object' && answer.action === 'accept' ? (answer.content ?? {}) : null
const accepted = (responses, key) => acceptedContent(responses[key])

export function addModernFixtures(server) {
  server
    .tool('test_missing_capability', { description: "Needs the client's sampling capability", inputSchema: noArgs }, async (_args, ctx) => {
      if (ctx.clientCapabilities.sampling !== undefined) return 'Client declared sampling capability; proceeding.'
      // Without it the engine answers -32021 (2026-07-28) or an error result.
      await ctx.sample(sampling('Hello', 10))
      return 'unreachable'
    })
    .tool(
      'test_streaming_elicitation',
      { description: 'Asks for confirmation through the protocol of the request', inputSchema: noArgs },
      async (_args, ctx) => {
        const answer = await ctx.elicit(ask('Please confirm', 'confirmed', 'boolean'))
        return `confirmation: ${answer.action}`
      },
    )
    .tool('test_logging_tool', { description: 'Logs three messages at the level the request asked for', inputSchema: noArgs }, (_args, ctx) => {
      ctx.log('debug', 'debug message')
      ctx.log('info', 'info message')
      ctx.log('warning', 'warning message')
      return 'Logging tool executed'
    })
    .tool(
      'test_x_mcp_header',
      {
        description: 'Echoes a region that is mirrored in the Mcp-Param-Region header',
        inputSchema: {
          type: 'object',
          properties: { region: { type: 'string', description: 'Mirrored into the Mcp-Param-Region header', 'x-mcp-header': 'Region' } },
        },
      },
      ({ region }) => `region=${region ?? '<none>'}`,
    )
    .tool('test_input_required_result_elicitation', { description: "Asks the user's name (MRTR)", inputSchema: noArgs }, (_args, ctx) => {
      const content = accepted(ctx.inputResponses, 'user_name')
      if (typeof content?.name === 'string') return `Hello, ${content.name}!`
      return new InputRequired().elicit('user_name', ask('What is your name?', 'name'))
    })
    .tool('test_input_required_result_sampling', { description: "Asks the client's model (MRTR)", inputSchema: noArgs }, (_args, ctx) => {
      const answer = ctx.inputResponses.capital_question
      if (answer) return `Model said: ${answer.content?.text ?? ''}`
      return new InputRequired().sample('capital_question', sampling('What is the capital of France?', 100))
    })
    .tool('test_input_required_result_list_roots', { description: "Asks for the client's roots (MRTR)", inputSchema: noArgs }, (_args, ctx) => {
      const roots = ctx.inputResponses.client_roots?.roots
      if (Array.isArray(roots)) return `Client exposed ${roots.length} root(s).`
      return new InputRequired().listRoots('client_roots')
    })
    .tool('test_input_required_result_request_state', { description: 'Carries state between rounds (MRTR)', inputSchema: noArgs }, (_args, ctx) => {
      if (accepted(ctx.inputResponses, 'confirm') && ctx.requestState === 'awaiting-confirm') return 'state-ok: confirmed'
      return new InputRequired().elicit('confirm', ask('Please confirm', 'ok', 'boolean')).withState('awaiting-confirm')
    })
    .tool('test_input_required_result_multiple_inputs', { description: 'Asks three questions in one round (MRTR)', inputSchema: noArgs }, (_args, ctx) => {
      const all = ['user_name', 'greeting', 'client_roots'].every((key) => key in ctx.inputResponses)
      if (all && ctx.requestState === 'multi') return 'All inputs received.'
      return new InputRequired()
        .elicit('user_name', ask('What is your name?', 'name'))
        .sample('greeting', sampling('Generate a greeting', 50))
        .listRoots('client_roots')
        .withState('multi')
    })
    .tool('test_input_required_result_multi_round', { description: 'Asks two questions, one per round (MRTR)', inputSchema: noArgs }, (_args, ctx) => {
      const state = ctx.requestState ? JSON.parse(ctx.requestState) : {}
      const color = accepted(ctx.inputResponses, 'step2')?.color
      if (typeof state.name === 'string' && typeof color === 'string') return `${state.name} likes ${color}.`
      const name = accepted(ctx.inputResponses, 'step1')?.name
      if (typeof name === 'string') {
        return new InputRequired().elicit('step2', ask('Step 2: What is your favorite color?', 'color')).withState(JSON.stringify({ name }))
      }
      return new InputRequired().elicit('step1', ask('Step 1: What is your name?', 'name')).withState(JSON.stringify({ step: 1 }))
    })
    .tool('test_input_required_result_tampered_state', { description: 'Refuses a state that was altered (MRTR)', inputSchema: noArgs }, (_args, ctx) => {
      if (accepted(ctx.inputResponses, 'confirm') && ctx.requestState === 'untampered') return 'state verified'
      return new InputRequired().elicit('confirm', ask('Please confirm', 'ok', 'boolean')).withState('untampered')
    })
    .tool('test_input_required_result_capabilities', { description: 'Asks only what the client can answer (MRTR)', inputSchema: noArgs }, (_args, ctx) => {
      if ('sample' in ctx.inputResponses || 'ask' in ctx.inputResponses) return 'Answered.'
      // The engine also leaves out kinds the request did not declare.
      return new InputRequired().sample('sample', sampling('Say hello', 50)).elicit('ask', ask('Please confirm', 'ok', 'boolean'))
    })
    .prompt('test_input_required_result_prompt', { description: 'A prompt that asks for context first (MRTR)' }, (_args, round) => {
      const context = accepted(round.inputResponses, 'user_context')?.context
      if (typeof context === 'string') return `Use the following context: ${context}`
      return new InputRequired().elicit('user_context', ask('What context should the prompt use?', 'context'))
    })
    // Not a harness fixture: the pool test updates a resource on one replica and listens on the others.
    .tool(
      'test_update_resource',
      {
        description: 'Announces that the resource `uri` changed: listeners hear notifications/resources/updated',
        inputSchema: { type: 'object', properties: { uri: { type: 'string' } }, required: ['uri'] },
      },
      ({ uri }) => {
        server.notifyResourceUpdated(uri)
        return `updated ${uri}`
      },
    )
    .tool('test_trigger_tool_change', { description: 'Adds and removes a tool: listeners hear tools/list_changed', inputSchema: noArgs }, () => {
      server.tool('test_dynamic_tool', { description: 'Here for a moment', inputSchema: noArgs }, () => 'dynamic')
      server.removeTool('test_dynamic_tool')
      return 'tool list changed'
    })
    .tool('test_trigger_prompt_change', { description: 'Adds and removes a prompt: listeners hear prompts/list_changed', inputSchema: noArgs }, () => {
      server.prompt('test_dynamic_prompt', { description: 'Here for a moment' }, () => 'dynamic')
      server.removePrompt('test_dynamic_prompt')
      return 'prompt list changed'
    })
}
