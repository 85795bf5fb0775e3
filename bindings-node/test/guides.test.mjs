// The guides' examples (examples/guides, included by docs/guides/*.md): each guide's Node server
// and its test pass under node --test as a user runs them. The files are copied into this
// package's folder, where `toolwire` resolves to the package itself and `zod` to its dev
// dependency.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

const here = import.meta.dirname
const guides = join(here, '..', '..', 'examples', 'guides')

for (const [guide, passing] of [['resources', 1], ['context', 2], ['http', 1], ['middleware', 1], ['auth', 1], ['tasks', 2], ['replicas', 1]]) {
  test(`the ${guide} guide's example passes its own test`, () => {
    const example = join(guides, guide, 'node')
    const work = join(here, '.guides', guide)
    mkdirSync(work, { recursive: true })
    const names = readdirSync(example).filter((name) => name.endsWith('.mjs'))
    for (const name of names) copyFileSync(join(example, name), join(work, name))
    const testFiles = names.filter((name) => name.endsWith('.test.mjs'))
    assert.equal(testFiles.length, 1, 'each guide has one test file')
    // A run of its own: without this, node:test in the child reports to this test run instead.
    const env = { ...process.env }
    delete env.NODE_TEST_CONTEXT
    const report = execFileSync(process.execPath, ['--test', '--test-reporter=tap', join(work, testFiles[0])], { encoding: 'utf8', env })
    assert.match(report, new RegExp(`^# pass ${passing}$`, 'm'))
    assert.match(report, /^# fail 0$/m)
  })
}
