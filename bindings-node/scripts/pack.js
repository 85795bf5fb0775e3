#!/usr/bin/env node
'use strict'
// Packs the npm packages users install, as napi-rs projects lay them out:
//   toolwire-<version>.tgz                       JavaScript and types only, no install script, an
//                                                optional dependency on each platform package;
//   toolwire-<platform>-<version>.tgz            @toolwire/<platform>: one prebuilt addon, with
//                                                os/cpu/libc fields so npm installs only the
//                                                package of the user's machine.
// Usage: node scripts/pack.js --out DIR [--addon FILE --platform NAME]...
// scripts/dist calls it with the addon it built for linux-x64-gnu; a release build passes one
// --addon/--platform pair per platform built on its own machine.
const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { PLATFORMS } = require('../lib/platform')

const here = path.resolve(__dirname, '..')
const manifest = JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8'))

// npm's os/cpu/libc fields of each platform package.
const FIELDS = {
  'linux-x64-gnu': { os: ['linux'], cpu: ['x64'], libc: ['glibc'] },
  'linux-arm64-gnu': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
  'linux-x64-musl': { os: ['linux'], cpu: ['x64'], libc: ['musl'] },
  'darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  'darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  'win32-x64-msvc': { os: ['win32'], cpu: ['x64'] },
}

function parseArgs(argv) {
  const options = { out: null, addons: [] }
  for (let i = 0; i < argv.length; i += 1) {
    const value = argv[i + 1]
    if (argv[i] === '--out' && value) options.out = path.resolve(value)
    else if (argv[i] === '--addon' && value) options.addons.push({ file: path.resolve(value) })
    else if (argv[i] === '--platform' && value && options.addons.length) options.addons.at(-1).platform = value
    else throw new Error(`pack.js: unexpected argument ${argv[i]}; usage: --out DIR [--addon FILE --platform NAME]...`)
    i += 1
  }
  if (!options.out) throw new Error('pack.js: --out DIR is required')
  for (const addon of options.addons) {
    if (!PLATFORMS.includes(addon.platform)) {
      throw new Error(`pack.js: --platform must follow --addon and be one of ${PLATFORMS.join(', ')}`)
    }
    if (!fs.statSync(addon.file, { throwIfNoEntry: false })?.isFile()) throw new Error(`pack.js: no addon at ${addon.file}`)
  }
  return options
}

function common() {
  const { version, license, homepage, repository, bugs } = manifest
  return { version, license, homepage, repository, bugs }
}

// Copies with symlinks resolved (the repository links LICENSE to the root's).
function copy(from, to) {
  fs.cpSync(from, to, { recursive: true, dereference: true })
}

function pack(stage, out) {
  const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', out], { cwd: stage, encoding: 'utf8' })
  return path.join(out, name.trim().split('\n').at(-1))
}

function packMain(out) {
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'toolwire-npm-'))
  for (const file of manifest.files) copy(path.join(here, file), path.join(stage, file))
  const pkg = { ...manifest }
  delete pkg.scripts
  delete pkg.devDependencies
  pkg.optionalDependencies = Object.fromEntries(PLATFORMS.map((p) => [`@toolwire/${p}`, manifest.version]))
  fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`)
  const tarball = pack(stage, out)
  fs.rmSync(stage, { recursive: true, force: true })
  return tarball
}

function packPlatform(addon, out) {
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'toolwire-npm-'))
  const binary = `toolwire.${addon.platform}.node`
  fs.copyFileSync(addon.file, path.join(stage, binary))
  copy(path.join(here, 'LICENSE'), path.join(stage, 'LICENSE'))
  fs.writeFileSync(
    path.join(stage, 'README.md'),
    `# @toolwire/${addon.platform}\n\nThe prebuilt native addon of [toolwire](https://www.npmjs.com/package/toolwire) ` +
      `for ${addon.platform}. Install \`toolwire\`, not this package: npm picks the platform package itself.\n`,
  )
  const pkg = {
    name: `@toolwire/${addon.platform}`,
    description: `The ${addon.platform} native addon of toolwire`,
    ...common(),
    ...FIELDS[addon.platform],
    main: binary,
    files: [binary, 'README.md', 'LICENSE'],
    engines: manifest.engines,
  }
  fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`)
  const tarball = pack(stage, out)
  fs.rmSync(stage, { recursive: true, force: true })
  return tarball
}

try {
  const options = parseArgs(process.argv.slice(2))
  fs.mkdirSync(options.out, { recursive: true })
  for (const addon of options.addons) console.log(packPlatform(addon, options.out))
  console.log(packMain(options.out))
} catch (err) {
  process.stderr.write(`${err.message}\n`)
  process.exit(1)
}
