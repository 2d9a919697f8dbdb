// The example workspace: two projects, where app depends on lib.
// Try: vx show, vx run build, vx run build (again: every task a cache hit), vx mcp.
import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'

export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp({ run: ['build', 'test', 'lint'] })],
  tasks: {
    build: {
      description: 'Bundle the sources into dist/',
      command: 'sh ../../scripts/build.sh',
      dependsOn: ['^build'],
      inputs: ['src/**', 'package.json'],
      outputs: ['dist/**'],
    },
    test: {
      description: 'Check that the built bundle holds every source file',
      command: 'sh ../../scripts/test.sh',
      dependsOn: ['build'],
      inputs: ['src/**'],
      timeout: '1m',
    },
    lint: {
      description: 'Refuse sources that still carry a TODO',
      command: '! grep -rn TODO src',
      inputs: ['src/**'],
    },
  },
})
