'use strict'
// Loads the addon that `npm install` built (scripts/build.js).
const path = require('node:path')

const file = process.env.TOOLWIRE_NODE_ADDON || path.join(__dirname, '..', 'toolwire.node')
try {
  module.exports = require(file)
} catch (err) {
  err.message =
    `toolwire: cannot load the native addon ${file} (build it with \`npm run build\` in ` +
    `bindings-node, or reinstall the package): ${err.message}`
  throw err
}
