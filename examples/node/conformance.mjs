// The conformance server with JavaScript handlers: the tools, resources and prompts the official
// MCP conformance suite (@modelcontextprotocol/conformance) exercises, with the answers it expects.
// Run it with `examples/run-demo node --conformance --http PORT`.
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'

import { Server, audio, embeddedResource, image, text } from 'toolwire'

import { addModernFixtures } from './conformance-modern.mjs'
import { addTaskFixtures } from './conformance-tasks.mjs'
import { addGreeter } from './greeter.mjs'

export const RED_PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC'
export const SILENT_WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA=='

const noArgs = { type: 'object', properties: {} }
const strings = (...names) => ({
  type: 'object',
  properties: Object.fromEntries(names.map((n) => [n, { type: 'string' }])),
  required: names,
})

async function elicitAndReport(ctx, params, prefix) {
  const answer = await ctx.elicit(params)
  return `${prefix}action=${answer.action}, content=${JSON.stringify(answer.content ?? null)}`
}

const titled = (prefix, word) =>
  [['1', 'First'], ['2', 'Second'], ['3', 'Third']].map(([n, w]) => ({ const: `${prefix}${n}`, title: `${w} ${word}` }))

/** The conformance server; `options` are `Server`'s (`redis`, `requestStateKeys`: a replica). */
export function buildConformanceServer(options = {}) {
  const server = new Server({ name: 'toolwire-conformance', version: '0.1.0', ...options })
  server
    .tool('test_simple_text', { description: 'Returns simple text', inputSchema: noArgs }, () => 'This is a simple text response for testing.')
    .tool('test_image_content', { description: 'Returns an image', inputSchema: noArgs }, () => ({ content: [image(RED_PIXEL_PNG, 'image/png')] }))
    .tool('test_audio_content', { description: 'Returns audio', inputSchema: noArgs }, () => ({ content: [audio(SILENT_WAV, 'audio/wav')] }))
    .tool('test_embedded_resource', { description: 'Returns an embedded resource', inputSchema: noArgs }, () => ({
      content: [embeddedResource({ uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' })],
    }))
    .tool('test_multiple_content_types', { description: 'Returns text, an image and a resource', inputSchema: noArgs }, () => ({
      content: [
        text('Multiple content types test:'),
        image(RED_PIXEL_PNG, 'image/png'),
        embeddedResource({ uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' }),
      ],
    }))
    .tool('test_tool_with_logging', { description: 'Logs three messages while it runs', inputSchema: noArgs }, async (_args, ctx) => {
      ctx.log('info', 'Tool execution started')
      await delay(50)
      ctx.log('info', 'Tool processing data')
      await delay(50)
      ctx.log('info', 'Tool execution completed')
      return 'Tool with logging executed successfully'
    })
    .tool('test_error_handling', { description: 'Always fails', inputSchema: noArgs }, () => {
      throw new Error('This tool intentionally returns an error for testing')
    })
    .tool('test_tool_with_progress', { description: 'Reports progress 0, 50, 100 of 100', inputSchema: noArgs }, async (_args, ctx) => {
      for (const done of [0, 50, 100]) {
        ctx.progress(done, 100)
        if (done < 100) await delay(50)
      }
      return 'Tool with progress executed successfully'
    })
    .tool('test_sampling', { description: "Asks the client's model", inputSchema: strings('prompt') }, async ({ prompt }, ctx) => {
      const answer = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 })
      return `LLM response: ${answer?.content?.text ?? ''}`
    })
    .tool('test_elicitation', { description: 'Asks the user', inputSchema: strings('message') }, ({ message }, ctx) =>
      elicitAndReport(
        ctx,
        {
          message,
          requestedSchema: {
            type: 'object',
            properties: {
              username: { type: 'string', description: "User's response" },
              email: { type: 'string', description: "User's email address" },
            },
            required: ['username', 'email'],
          },
        },
        'User response: ',
      ),
    )
    .tool('test_elicitation_sep1034_defaults', { description: 'Elicitation with defaults', inputSchema: noArgs }, (_args, ctx) =>
      elicitAndReport(
        ctx,
        {
          message: 'Please review and update the form fields with defaults',
          requestedSchema: {
            type: 'object',
            properties: {
              name: { type: 'string', description: 'User name', default: 'John Doe' },
              age: { type: 'integer', description: 'User age', default: 30 },
              score: { type: 'number', description: 'User score', default: 95.5 },
              status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
              verified: { type: 'boolean', description: 'Verified', default: true },
            },
          },
        },
        'Elicitation completed: ',
      ),
    )
    .tool('test_elicitation_sep1330_enums', { description: 'Elicitation with every enum form', inputSchema: noArgs }, (_args, ctx) =>
      elicitAndReport(
        ctx,
        {
          message: 'Please select options from the enum fields',
          requestedSchema: {
            type: 'object',
            properties: {
              untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
              titledSingle: { type: 'string', oneOf: titled('value', 'Option') },
              legacyEnum: { type: 'string', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
              untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
              titledMulti: { type: 'array', items: { anyOf: titled('value', 'Choice') } },
            },
          },
        },
        'Elicitation completed: ',
      ),
    )
    .tool(
      'json_schema_2020_12_tool',
      {
        description: 'Tool with JSON Schema 2020-12 features',
        inputSchema: {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          $defs: {
            address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } },
          },
          properties: {
            name: { type: 'string' },
            address: { $ref: '#/$defs/address' },
            contactMethod: { type: 'string', enum: ['phone', 'email'] },
            phone: { type: 'string' },
            email: { type: 'string' },
          },
          allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
          if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
          then: { required: ['phone'] },
          else: { required: ['email'] },
          additionalProperties: false,
        },
      },
      (args) => JSON.stringify(args),
    )
    .tool('test_reconnection', { description: 'Closes its SSE stream mid-call; the answer comes on resumption', inputSchema: noArgs }, async (_args, ctx) => {
      await delay(50)
      ctx.closeSseStream()
      await delay(200)
      return 'Reconnection test completed'
    })
    .resource('test://static-text', { name: 'Static text', description: 'A static text resource', mimeType: 'text/plain' }, () =>
      'This is the content of the static text resource.',
    )
    .resource('test://static-binary', { name: 'Static binary', description: 'A static PNG', mimeType: 'image/png' }, () =>
      Buffer.from(RED_PIXEL_PNG, 'base64'),
    )
    .resource('test://watched-resource', { name: 'Watched', description: 'A resource to subscribe to', mimeType: 'text/plain' }, () =>
      'Watched resource content',
    )
    .resource('test://template/{id}/data', { name: 'Template data', description: 'Data for an id', mimeType: 'application/json' }, (_uri, { id }) =>
      JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
    )
    .prompt('test_simple_prompt', { description: 'A prompt without arguments' }, () => 'This is a simple prompt for testing.')
    .prompt(
      'test_prompt_with_arguments',
      {
        description: 'A prompt with two arguments',
        arguments: [
          { name: 'arg1', description: 'First test argument', required: true },
          { name: 'arg2', description: 'Second test argument', required: true },
        ],
      },
      ({ arg1, arg2 }) => `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`,
    )
    .prompt(
      'test_prompt_with_embedded_resource',
      { description: 'A prompt embedding a resource', arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }] },
      ({ resourceUri }) => [
        embeddedResource({ uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' }),
        'Please process the embedded resource above.',
      ],
    )
    .prompt('test_prompt_with_image', { description: 'A prompt with an image' }, () => [
      image(RED_PIXEL_PNG, 'image/png'),
      'Please analyze the image above.',
    ])
    .completion({ prompt: 'test_prompt_with_arguments' }, (_argument, value) =>
      ['paris', 'park', 'party', 'test', 'testing'].filter((c) => c.startsWith(value)),
    )
  // The Skills extension's scenarios read the example skills.
  server.loadSkills(exampleSkillsDir())
  // MCP Apps: the greeter example (examples/apps), for the browser test.
  addGreeter(server)
  addModernFixtures(server)
  addTaskFixtures(server)
  return server
}

/** examples/skills, or where TOOLWIRE_SKILLS_DIR says. */
export function exampleSkillsDir() {
  return process.env.TOOLWIRE_SKILLS_DIR || fileURLToPath(new URL('../skills', import.meta.url))
}
