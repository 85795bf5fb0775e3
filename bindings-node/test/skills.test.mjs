// The Skills extension (SEP-2640) and declared extensions, from JavaScript: skills from code and
// from a directory tree, refusals, reloads, and what a tool sees of the client's extensions.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { Server, ToolwireError } from '../lib/index.js'
import { Client } from './client.mjs'

const SKILLS = 'io.modelcontextprotocol/skills'
const skillMd = (name) => `---\nname: ${name}\ndescription: Does things\n---\n# ${name}\n`
const digest = (bytes) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`

async function request(client, id, method, params = {}) {
  client.send({ jsonrpc: '2.0', id, method, params })
  return client.recv()
}

// --8<-- [start:from-code]
test('a skill from code is listed, described and read', async () => {
  const server = new Server({ name: 'skills', version: '1' })
    .addSkill('acme/invoices', skillMd('invoices'), { 'templates/a.md': '# A\n', 'logo.bin': new Uint8Array([0, 255]) })
  const client = new Client(server)
  const caps = (await client.initialize()).result.capabilities
  assert.deepEqual(caps.extensions[SKILLS], { directoryRead: true })
  const { skills } = (await request(client, 1, 'skills/list')).result
  assert.deepEqual(skills, [{
    uri: 'skill://acme/invoices/SKILL.md',
    frontmatter: { name: 'invoices', description: 'Does things' },
    resources: [
      { uri: 'skill://acme/invoices/SKILL.md', digest: digest(skillMd('invoices')), size: skillMd('invoices').length },
      { uri: 'skill://acme/invoices/logo.bin', digest: digest(new Uint8Array([0, 255])), size: 2 },
      { uri: 'skill://acme/invoices/templates/a.md', digest: digest('# A\n'), size: 4 },
    ],
  }])
  const blob = await request(client, 2, 'resources/read', { uri: 'skill://acme/invoices/logo.bin' })
  assert.equal(blob.result.contents[0].blob, 'AP8=')
  const unknown = await request(client, 3, 'skills/get', { uri: 'skill://acme/SKILL.md' })
  assert.equal(unknown.error.code, -32602)
  assert.equal(server.removeSkill('skill://acme/invoices/SKILL.md'), true)
  assert.equal(server.removeSkill('acme/invoices'), false)
})
// --8<-- [end:from-code]

test('what the spec refuses throws TOOLWIRE_REGISTRATION naming it', () => {
  const server = new Server({ name: 'skills', version: '1' })
  for (const [path, md, files, expected] of [
    ['pdf', skillMd('other'), {}, /must be its name/],
    ['pdf', 'no frontmatter', {}, /frontmatter/],
    ['pdf', skillMd('pdf'), { '../escape.md': 'x' }, /`\.` and `\.\.`/],
    ['pdf', skillMd('pdf'), { '/etc/passwd': 'x' }, /must be relative/],
  ]) {
    assert.throws(() => server.addSkill(path, md, files), (err) => {
      assert.ok(err instanceof ToolwireError)
      assert.equal(err.code, 'TOOLWIRE_REGISTRATION')
      assert.match(err.message, expected)
      return true
    })
  }
  assert.throws(() => server.addSkill('pdf', 42), TypeError)
})

// --8<-- [start:tree]
test('a tree is loaded, reloaded and kept inside its root', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'toolwire-skills-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const root = join(dir, 'skills')
  mkdirSync(join(root, 'pdf', 'templates'), { recursive: true })
  writeFileSync(join(root, 'pdf', 'SKILL.md'), skillMd('pdf'))
  writeFileSync(join(root, 'pdf', 'templates', 'invoice.md'), 'v1')
  const server = new Server({ name: 'skills', version: '1' })
  assert.equal(server.loadSkills(root), 1)
  const client = new Client(server)
  await client.initialize()
  const listing = await request(client, 1, 'resources/directory/read', { uri: 'skill://pdf' })
  assert.deepEqual(listing.result.resources.map((r) => [r.name, r.mimeType]), [['SKILL.md', 'text/markdown'], ['templates', 'inode/directory']])
  writeFileSync(join(root, 'pdf', 'templates', 'invoice.md'), 'v2')
  assert.equal(server.loadSkills(root), 1)
  assert.equal((await client.recv()).method, 'notifications/resources/list_changed')
  const read = await request(client, 2, 'resources/read', { uri: 'skill://pdf/templates/invoice.md' })
  assert.equal(read.result.contents[0].text, 'v2')
  writeFileSync(join(dir, 'secret.txt'), 'not yours')
  symlinkSync(join(dir, 'secret.txt'), join(root, 'pdf', 'secret.txt'))
  assert.throws(() => server.loadSkills(root), /leads out of the skills directory/)
  const still = await request(client, 3, 'resources/read', { uri: 'skill://pdf/templates/invoice.md' })
  assert.equal(still.result.contents[0].text, 'v2', 'a failed reload keeps what was served')
})
// --8<-- [end:tree]

// --8<-- [start:extensions]
test('a tool sees the extensions the client declared', async () => {
  const server = new Server({ name: 'ext', version: '1' })
    .declareExtension('com.example/widgets', { colors: ['red'] })
    .tool('which', {}, (_args, ctx) => ({ declared: ctx.clientExtension('com.example/widgets') }))
  const client = new Client(server)
  const init = await client.initialize('2025-11-25', { extensions: { 'com.example/widgets': { v: 2 } } })
  assert.deepEqual(init.result.capabilities.extensions, { 'com.example/widgets': { colors: ['red'] } })
  client.call(1, 'which')
  assert.deepEqual((await client.recv()).result.structuredContent, { declared: { v: 2 } })
  assert.throws(() => server.declareExtension('widgets'), /vendor-prefix\/name/)
  assert.throws(() => server.declareExtension(SKILLS, {}), /declared by the engine/)
})
// --8<-- [end:extensions]

test('a watched tree is served again when it changes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'toolwire-skills-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  mkdirSync(join(dir, 'pdf'))
  writeFileSync(join(dir, 'pdf', 'SKILL.md'), skillMd('pdf'))
  const server = new Server({ name: 'skills', version: '1' })
  assert.equal(server.watchSkills(dir, { intervalMs: 10 }), 1)
  const client = new Client(server)
  await client.initialize()
  mkdirSync(join(dir, 'notes'))
  writeFileSync(join(dir, 'notes', 'SKILL.md'), skillMd('notes'))
  // The wait is for the notification the watch's reload sends.
  assert.equal((await client.recv()).method, 'notifications/resources/list_changed')
  const { skills } = (await request(client, 1, 'skills/list')).result
  assert.deepEqual(skills.map((s) => s.uri), ['skill://notes/SKILL.md', 'skill://pdf/SKILL.md'])
  assert.throws(() => server.watchSkills(dir, { intervalMs: -1 }), /intervalMs/)
})
