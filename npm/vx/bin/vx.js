#!/usr/bin/env node
'use strict'
// The `vx` command of @vzn/vx: it finds the vx binary of this platform, which npm, pnpm, yarn and bun
// installed as one of the optionalDependencies (@vzn/vx-linux-x64, …: each declares its os and cpu,
// so only the matching one is installed), and runs it with this process's arguments and stdio.
// There is no postinstall script: pnpm 10 and --ignore-scripts skip those, optional packages don't.
// VX_BINARY_PATH names a binary to run instead (a build from source, a debug build).

const fs = require('fs')
const path = require('path')
const { spawnSync } = require('child_process')

// platformPackages maps `${process.platform}-${process.arch}` to the package holding its binary.
// npm/build.sh writes the same list into package.json's optionalDependencies.
const platformPackages = {
  'linux-x64': '@vzn/vx-linux-x64',
  'linux-arm64': '@vzn/vx-linux-arm64',
  'darwin-x64': '@vzn/vx-darwin-x64',
  'darwin-arm64': '@vzn/vx-darwin-arm64',
  'win32-x64': '@vzn/vx-win32-x64',
  'win32-arm64': '@vzn/vx-win32-arm64',
}

function fail(lines) {
  process.stderr.write('vx: ' + lines.join('\n    ') + '\n')
  process.exit(1)
}

function binaryPath() {
  const override = process.env.VX_BINARY_PATH
  if (override) {
    const bin = path.resolve(override)
    if (!fs.existsSync(bin)) fail([`VX_BINARY_PATH names ${bin}, which does not exist.`])
    return bin
  }
  const platform = `${process.platform}-${process.arch}`
  const pkg = platformPackages[platform]
  const goInstall = 'go install github.com/vzn/vx/cmd/vx@latest'
  if (!pkg) {
    fail([
      `no vx binary is published for this platform (${platform}).`,
      `Published: ${Object.keys(platformPackages).join(', ')}.`,
      `Build it from source (${goInstall}) and set VX_BINARY_PATH to it.`,
    ])
  }
  const exe = process.platform === 'win32' ? 'vx.exe' : 'vx'
  let bin
  try {
    bin = require.resolve(`${pkg}/bin/${exe}`)
  } catch {
    fail([
      `the package ${pkg}, which holds vx's binary for this platform (${platform}), is not installed.`,
      `@vzn/vx installs it as an optional dependency: it is missing when optional dependencies were`,
      `left out (npm --omit=optional or --no-optional, yarn --ignore-optional, pnpm --no-optional),`,
      `when node_modules was installed on another platform and copied here, or when a lockfile`,
      `made elsewhere lacks it. Reinstall with optional dependencies, or add it: npm install -D ${pkg}`,
      `Or set VX_BINARY_PATH to a vx binary, such as one built by ${goInstall}.`,
    ])
  }
  // Both are pinned to one version; a lockfile edited by hand or a partial update can still part them.
  const own = require('../package.json').version
  let theirs
  try {
    theirs = require(`${pkg}/package.json`).version
  } catch {}
  if (theirs !== undefined && theirs !== own) {
    process.stderr.write(`vx: warning: @vzn/vx is ${own} but ${pkg} is ${theirs}; reinstall @vzn/vx so that they match\n`)
  }
  return bin
}

const bin = binaryPath()
// Ctrl-C reaches the whole foreground process group, vx too: wait for vx's graceful stop and its
// exit code rather than dying first and leaving vx printing after the shell's prompt is back.
// (Passing it on would be a second SIGINT, which vx takes as a hard stop.)
process.on('SIGINT', () => {})
const run = () => spawnSync(bin, process.argv.slice(2), { stdio: 'inherit' })
let result = run()
if (result.error && result.error.code === 'EACCES' && process.platform !== 'win32') {
  // A copy that lost the executable bit (an archive, a cache that stores no modes): restore it once.
  try {
    fs.chmodSync(bin, 0o755)
    result = run()
  } catch {}
}
if (result.error) {
  fail([`cannot run ${bin}: ${result.error.message}`])
}
if (result.signal) {
  // Die of the same signal, so that a shell or CI sees what the binary saw.
  process.removeAllListeners('SIGINT')
  process.kill(process.pid, result.signal)
  process.exit(1) // if the signal is ignored here
}
process.exit(result.status ?? 1)
