// Prompt arguments from a zod shape (zod 3 and 4), a zod object or JSON Schema, as the
// TypeScript SDK's `argsSchema`: declared, checked (-32602 naming the argument), parsed, and
// completed from `completable()` or an enum. Written with toolwire/testing's client.
import assert from 'node:assert/strict'
import { test } from 'node:test'

import { z } from 'zod'
import { z as z3 } from 'zod3'

import { ProtocolError, ResourceNotFound, Server, completable } from '../lib/index.mjs'
import { McpError, connect } from '../lib/testing.mjs'

function promptServer() {
  const server = new Server({ name: 'prompts', version: '1' })
  server.prompt(
    'review',
    {
      title: 'Code review',
      description: 'Reviews code',
      argsSchema: {
        code: z.string().min(3).describe('The code to review'),
        language: completable(z.enum(['python', 'rust', 'ruby']).optional(), (value, { arguments: given }) =>
          ['python', 'rust', 'ruby'].filter((l) => l.startsWith(value) && l !== given.exclude),
        ).describe('Its language'),
        style: z.enum(['terse', 'kind']).default('kind'),
        exclude: z.string().optional(),
      },
    },
    ({ code, language, style }) => `Review this ${language ?? 'code'} (${style}): ${code}`,
  )
  server.prompt(
    'old',
    { argsSchema: z3.object({ topic: z3.string().regex(/^[a-z]+$/, 'lower-case letters only'), depth: completable(z3.string(), (v) => ['deep', 'shallow'].filter((d) => d.startsWith(v))).optional() }) },
    ({ topic, depth }) => `About ${topic} at ${depth ?? 'any'} depth`,
  )
  server.prompt(
    'plain',
    {
      argsSchema: {
        type: 'object',
        properties: {
          city: { type: 'string', title: 'City', description: 'Where', minLength: 2 },
          unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        },
        required: ['city'],
      },
    },
    ({ city, unit }) => `Weather in ${city} (${unit ?? 'celsius'})`,
  )
  server.prompt('async-refine', { argsSchema: z.object({ word: z.string().refine(async (w) => w !== 'no', 'not "no"') }) }, ({ word }) => word)
  server.prompt('strict', () => {
    throw new ProtocolError(-32602, 'this prompt takes nothing today')
  })
  server.resource('memo://gone', { name: 'gone' }, () => {
    throw new ProtocolError(-32001, 'come back later')
  })
  server.resource('memo://missing', { name: 'missing' }, () => {
    throw new ResourceNotFound('not here')
  })
  return server
}

test('argsSchema declares the arguments: names, titles, descriptions, required', async () => {
  const client = await connect(promptServer())
  const prompts = Object.fromEntries((await client.listPrompts()).map((p) => [p.name, p]))
  assert.deepEqual(prompts.review.arguments, [
    { name: 'code', description: 'The code to review', required: true },
    { name: 'language', description: 'Its language', required: false },
    { name: 'style', required: false },
    { name: 'exclude', required: false },
  ])
  assert.equal(prompts.review.title, 'Code review')
  assert.deepEqual(prompts.old.arguments, [{ name: 'topic', required: true }, { name: 'depth', required: false }])
  assert.deepEqual(prompts.plain.arguments, [
    { name: 'city', title: 'City', description: 'Where', required: true },
    { name: 'unit', required: false },
  ])
  await client.close()
})

test('arguments are parsed by the schema (defaults apply) and refused ones answer -32602', async () => {
  const client = await connect(promptServer())
  const rendered = await client.getPrompt('review', { code: 'x = 1', language: 'python' })
  assert.equal(rendered.messages[0].content.text, 'Review this python (kind): x = 1')
  // The TypeScript SDK's call shape works too.
  const sdkForm = await client.getPrompt({ name: 'old', arguments: { topic: 'rust' } })
  assert.equal(sdkForm.messages[0].content.text, 'About rust at any depth')
  assert.equal((await client.getPrompt('plain', { city: 'Oslo' })).messages[0].content.text, 'Weather in Oslo (celsius)')

  const refused = async (name, args) => {
    const err = await client.getPrompt(name, args).then(
      () => assert.fail(`${name} accepted ${JSON.stringify(args)}`),
      (e) => e,
    )
    assert.ok(err instanceof McpError, String(err))
    assert.equal(err.code, -32602, err.message)
    return err.error.message
  }
  const short = await refused('review', { code: 'x', language: 'cobol' })
  assert.match(short, /^Invalid arguments for prompt "review":/)
  assert.match(short, /- at \/code: /)
  assert.match(short, /- at \/language: /)
  assert.match(await refused('old', { topic: 'Rust' }), /- at \/topic: lower-case letters only/)
  assert.match(await refused('plain', { city: 'O' }), /- at \/city: "O" is shorter than 2 characters/)
  assert.match(await refused('plain', { city: 'Oslo', unit: 'kelvin' }), /- at \/unit: "kelvin" is not one of "celsius" or "fahrenheit"/)
  assert.match(await refused('async-refine', { word: 'no' }), /- at \/word: not "no"/)
  assert.equal((await client.getPrompt('async-refine', { word: 'yes' })).messages[0].content.text, 'yes')
  // The engine's own checks come first: a missing required argument, an unknown one.
  assert.match(await refused('review', {}), /needs the argument\(s\) code/)
  assert.match(await refused('review', { code: 'abc', mood: 'x' }), /takes no argument "mood"/)
  // A ProtocolError thrown by a prompt or resource handler keeps its code.
  assert.equal(await refused('strict', {}), 'this prompt takes nothing today')
  const gone = await client.readResource('memo://gone').catch((e) => e)
  assert.deepEqual([gone.code, gone.error.message], [-32001, 'come back later'])
  assert.equal((await client.readResource({ uri: 'memo://missing' }).catch((e) => e)).code, -32002)
  await client.close()
})

test('completable() and enums complete prompt arguments, with the other arguments as context', async () => {
  const client = await connect(promptServer())
  const ref = { type: 'ref/prompt', name: 'review' }
  assert.deepEqual((await client.complete(ref, 'language', 'r')).values, ['rust', 'ruby'])
  assert.deepEqual((await client.complete(ref, 'language', 'r', { exclude: 'ruby' })).values, ['rust'])
  assert.deepEqual((await client.complete(ref, 'style', 't')).values, ['terse'])
  assert.deepEqual((await client.complete(ref, 'code', 'x')).values, [])
  assert.deepEqual((await client.complete({ type: 'ref/prompt', name: 'plain' }, 'unit', '')).values, ['celsius', 'fahrenheit'])
  assert.deepEqual((await client.complete({ type: 'ref/prompt', name: 'old' }, 'depth', 's')).values, ['shallow'])
  await client.close()
})

test('argsSchema mistakes are refused at registration, naming the prompt and argument', () => {
  const server = new Server({ name: 'bad', version: '1' })
  const noop = () => 'x'
  assert.throws(() => server.prompt('p', { argsSchema: z.string() }, noop), /prompt "p": argsSchema must be a zod object or a zod raw shape/)
  assert.throws(
    () => server.prompt('p', { argsSchema: { type: 'object', properties: { n: { type: 'integer' } } } }, noop),
    /argument "n": prompt arguments are strings, not "integer"/,
  )
  assert.throws(
    () => server.prompt('p', { argsSchema: { type: 'object', properties: { n: { type: 'string', pattern: '(' } } } }, noop),
    /prompt "p": argumentsSchema: .*/,
  )
  assert.throws(() => server.prompt('p', { argsSchema: { a: z.string() }, arguments: [] }, noop), /argsSchema or arguments, not both/)
  assert.throws(() => server.prompt('p', { argSchema: { a: z.string() } }, noop), /unknown prompt option "argSchema"/)
  assert.throws(() => completable({ type: 'string' }, noop), /needs a zod schema/)
})
