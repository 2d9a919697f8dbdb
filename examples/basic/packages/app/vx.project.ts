import { defineProject } from '@vzn/vx/config'

export default defineProject({
  tags: ['web'],
  tasks: {
    build: { outputs: ['dist/**', 'build-info.txt'] },
  },
})
