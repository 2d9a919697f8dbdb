// @vzn/vx/config: the types of vx.workspace.ts and vx.project.ts.
//
// ONE SHAPE. These interfaces declare exactly the fields vx's config reader (engine/workspace, in Go)
// accepts — the workspace and project keys, every task field of graph.TaskFields, exec, secrets and
// sandbox — and @vzn/vx-mcp's McpOptions the options of mcp(). engine/workspace/dts_test.go asks the
// reader which fields it knows and fails on a field in one and not the other: whoever adds a field
// to the reader adds it here, with a doc comment (from docs/config.md), in the same change.
//
// The functions return their argument: vx evaluates config itself (its built-in copy of this module),
// and this package gives editors and `tsc` the types.

/**
 * A path glob, relative to the project folder (`'src/**'`; a leading `!` excludes), or from the
 * workspace root when it starts with `//` (`'//tsconfig.base.json'`). A glob that climbs out with
 * `..`, or an absolute path, is refused.
 */
export type Glob = string

/**
 * A task reference in `dependsOn`: `'build'` (this project's build), `'^build'` (build in every
 * project this one depends on) or `'lib#build'` (exactly that task).
 */
export type TaskRef = string

/** A task id, `project#task`. */
export type TaskId = `${string}#${string}`

/** A secret: the value is read from vx's environment variable `secret` at run time and reads `***` everywhere. */
export interface Secret {
  /** The name of the environment variable of vx's that holds the value. */
  secret: string
}

/** One `exec.env` value: a literal (numbers and booleans become their text) or `{ secret: 'NAME' }`. */
export type EnvValue = string | number | boolean | Secret

/** The environment given to a task's command. */
export interface Exec {
  /**
   * Variables set for the command: a string is the value; `{ secret: 'NAME' }` reads the value from
   * vx's environment variable `NAME` at run time, and the value never appears anywhere (`***`).
   */
  env?: Record<string, EnvValue>
  /**
   * How many times a failed run of the command (a non-zero exit, a timeout) is tried again in the
   * same `vx run`; a pass after a failure passes the run and marks the task flaky. `--retry` overrides it.
   */
  retries?: number
  /**
   * `true` sends the task to the REAPI engine (`remote.executor`, else `remoteCache.reapi`) even
   * without `remote.execute`; `false` keeps it on this machine. A persistent task, one with
   * `cache: false` or without declared outputs runs locally whatever this says.
   */
  remote?: boolean
}

/** A task's sandbox: what it may reach. */
export interface SandboxOptions {
  /** Whether the task may use the network (default `false`). */
  network?: boolean
  /** Globs of files beyond the project the task may read (`'//shared/**'`, from the workspace root). */
  read?: Glob[]
  /** Globs of files the task may write (`'dist/**'`). */
  write?: Glob[]
  /**
   * `true`: where the host cannot enforce the sandbox (no Landlock, not Linux, no network rules
   * for `network: false`), the task is refused with the reason rather than run with a one-line
   * warning (default `false`).
   */
  required?: boolean
}

/** `true` is the default sandbox (no network); `false` is none. */
export type Sandbox = boolean | SandboxOptions

/**
 * A task: a template in vx.workspace.ts that every project gets, or a project's task in
 * vx.project.ts, which overrides the template field by field (or is a whole new task, which then
 * needs a `command`, or `dependsOn` alone to be a group that runs its dependencies and nothing else).
 */
export interface Task {
  /** The shell command, run by `sh -c` in the project folder. */
  command?: string
  /** Free text for people and agents (`vx show`, the listTasks tool). */
  description?: string
  /**
   * Tasks that must finish first (default `[]`): `'build'` (this project's), `'^build'` (in every
   * project this one depends on), `'lib#build'` (exactly that task); a name may be a pattern
   * (`'lint:*'`, `'^build:*'`), every task it matches.
   */
  dependsOn?: TaskRef[]
  /**
   * Globs, relative to the project folder, of the files whose content enters the cache key (default:
   * every file of the project git does not ignore). `'$default'` stands for that default set;
   * `[]` means no file at all.
   */
  inputs?: Glob[]
  /** Globs of the files the task writes (default `[]`); a cache hit restores exactly them. */
  outputs?: Glob[]
  /** Names of environment variables whose values enter the cache key (default `[]`). */
  env?: string[]
  /** The environment given to the command: `{ env: { STAGE: 'prod', TOKEN: { secret: 'DEPLOY_TOKEN' } } }`. */
  exec?: Exec
  /** `false`: the task always runs and is never stored (default `true`). */
  cache?: boolean
  /**
   * `'90s'`, `'2m'`, `'1h30m'` (Go duration syntax) or a number of milliseconds (default none); a task
   * over it is killed with its whole process group and reads `timedOut`.
   */
  timeout?: string | number
  /** What the task may reach: `true` (no network) or `{ network, read, write }` (default none). */
  sandbox?: Sandbox
  /**
   * A long-running task (dev server, watcher) (default `false`): never cached, left out of
   * `vx run --all`, refused by runTasks; a task depending on it gets it started first and stopped
   * when every dependent has finished.
   */
  persistent?: boolean
  /**
   * A persistent task that `vx watch` may restart when its key moves (Turborepo's `interruptible`;
   * default `false`): one that is not keeps running, with its own hot reload.
   */
  interruptible?: boolean
  /** `false`: `vx run --all` leaves the task out (clean-up scripts); it still runs by name (default `true`). */
  all?: boolean
  /**
   * On a workspace template: only projects whose package.json has a script of the task's name get
   * the task (Turborepo's rule), unless a project's vx.project.ts names it (default `false`).
   */
  ifScript?: boolean
  /**
   * Names of environment variables the command sees without them entering the key (Turborepo's
   * `passThroughEnv`); `*` matches (`'JEST_*'`), `!` takes a name back out (`'!JEST_TOKEN'`).
   */
  passThroughEnv?: string[]
  /**
   * `'strict'` (the default): the command sees only its declared environment and a fixed base;
   * `'loose'`: all of vx's environment (`env` still says what enters the key).
   */
  envMode?: 'strict' | 'loose'
  /**
   * Globs (relative to the project folder) of input files the command writes itself, as tshy
   * writes `package.json`: after the task, such a file has changed only when its content did.
   */
  rewrites?: Glob[]
  /**
   * On a persistent task: its dependents start once it is ready, when any condition given holds:
   * `log`, a text a line of its output holds (not a pattern); `port`, a localhost TCP port that
   * accepts a connection. Past `timeout` (default `'60s'`) it is stopped as not ready and its
   * dependents are blocked.
   */
  readyWhen?: ReadyWhen
  /**
   * Commands (`'node -v'`) whose trimmed standard output enters the task's key: a tool upgrade
   * moves it. Each runs once per run, in the workspace root.
   */
  runtimeInputs?: string[]
  /**
   * A task that reads the terminal (a prompt, a login) (default `false`): its command gets vx's
   * stdin, it is never cached, no other task runs while it does, and runTasks refuses it.
   */
  interactive?: boolean
}

/** A persistent task's readiness gate: ready when any condition given holds. */
export interface ReadyWhen {
  /** A text (not a regular expression) that a line of the task's output holds, colours removed. */
  log?: string
  /** A TCP port on localhost that accepts a connection. */
  port?: number
  /** How long to wait: `'90s'`, `'2m'`, or milliseconds (default `'60s'`). */
  timeout?: string | number
}

/**
 * A plugin: `mcp()` from `@vzn/vx-mcp`, or your own made with `definePlugin`.
 */
export interface Plugin {
  /** The plugin's name (`vx info` lists it). */
  name: string
  /** The names of the CLI verbs the plugin declares (`vx info` reports them among its seams). */
  commands?: string[] | Record<string, unknown>
  /**
   * Called after resolution, in plugin order, with the resolved tasks by `project#task` id; a stage
   * that returns a map replaces the tasks with it. Fields a stage changed read as set by the plugin
   * in `vx show`.
   */
  stage?: (tasks: Record<TaskId, Task>) => Record<TaskId, Task> | void
}

/** vx.workspace.ts: the projects, the plugins, and the task templates every project gets. */
export interface WorkspaceConfig {
  /**
   * Globs of project folders, relative to the root (`'packages/*'`, `'tools/cli'`, `'.'` for the
   * root itself); default: the package manager's workspace globs in the root package.json.
   */
  projects?: string[]
  /** Plugins, in order: `mcp()` from `@vzn/vx-mcp` and your own. */
  plugins?: Plugin[]
  /**
   * Task templates by task name; every project gets each one unless it opts out (the root project
   * gets none).
   */
  tasks?: Record<string, Task>
  /**
   * Globs of files from the workspace root (`'tsconfig.base.json'`) whose content enters every
   * task's key: Turborepo's `globalDependencies`, Nx's `sharedGlobals`.
   */
  globalInputs?: Glob[]
  /** A shared remote cache server that teams and CI already run: bazel-remote or a Turborepo API server. */
  remoteCache?: RemoteCacheOptions
  /** Names of variables every task sees and whose values enter every task's key (Turborepo's `globalEnv`). */
  env?: string[]
  /** Names of variables every task sees without them entering a key (`globalPassThroughEnv`); `*` and `!` as a task's. */
  passThroughEnv?: string[]
  /** Every task's default `envMode`: `'strict'` (the default) or `'loose'`. */
  envMode?: 'strict' | 'loose'
  /**
   * The memory the running tasks may reserve together (`'6GiB'`, or bytes); each reserves its
   * recent peak RSS. Default: the cgroup limit, else the machine's memory. `--memory-budget` and
   * `VX_MEMORY_BUDGET` override it.
   */
  memoryBudget?: string | number
  /** What a task with no recorded peak reserves (`'1GiB'`, or bytes); default the median recorded peak, else 512 MiB. */
  taskMemory?: string | number
  /**
   * How long a whole `vx run` may take (`'30m'`, or milliseconds): past it the run is cancelled as
   * Ctrl-C cancels it. A task's own `timeout` still bounds the task. `--timeout` overrides it.
   */
  runTimeout?: string | number
  /**
   * The shared store every checkout and worktree of the repository uses (cache entries, blobs,
   * durations and peaks), relative to the workspace root or absolute. Default: the user's cache
   * folder (`$XDG_CACHE_HOME/vx/<repository id>`). `--cache-dir` and `VX_CACHE_DIR` override it.
   */
  cacheDir?: string
  /**
   * The remote cache scope a run reads and writes as: `'trusted'` (the default: the default
   * branch's CI reads and writes the task keys), `'read-only'` (reads them, writes nothing), or a
   * pull request's own name such as `'pr-123'` (letters, digits, `. _ - / @`, at most 128), which
   * reads its own entries, then the trusted ones, and writes its own only. `VX_CACHE_SCOPE` and
   * `--cache-scope` override it. The local cache is the same in every scope.
   */
  cacheScope?: 'trusted' | 'read-only' | (string & {})
  /**
   * How much the cache store keeps: after a run (in the background, at most hourly) and on
   * `vx cache prune`, entries last used longer ago than `maxAge` go, then the least recently used
   * until the rest fit in `maxSize`. Default `{ maxSize: '10GB', maxAge: '30d' }`, the size capped at
   * a tenth of the disk holding the store; `false` prunes only when asked with limits.
   */
  cacheRetention?: false | { maxSize?: string | number; maxAge?: string }
  /**
   * `true`: every `vx run` exports its run as OpenTelemetry traces over OTLP/HTTP, to the endpoint
   * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` names (default
   * `http://localhost:4318`), as `vx run --otel` does.
   */
  otel?: boolean
  /**
   * The git ref `--affected` compares with when none is given (`'origin/main'`, `'develop'`):
   * a task is affected when a file its inputs match changed since the merge-base with it. Default:
   * the default branch. `VX_AFFECTED_BASE` and `--affected=REF` override it.
   */
  affectedBase?: string
  /**
   * Commands (`'node -v'`, `'pnpm -v'`) whose trimmed standard output enters every task's key,
   * as `globalInputs`' files do: a Node upgrade moves every key.
   */
  globalRuntimeInputs?: string[]
  /**
   * How a task whose command runs a package script (`npm run build`, `pnpm build`) runs it:
   * `runner: 'direct'` (the default) runs the script's text through `sh -c` as the package manager
   * would have, without starting the manager, where the script does not need it;
   * `'package-manager'` always runs the command as written. Keys do not depend on it.
   */
  scripts?: { runner?: 'direct' | 'package-manager' }
  /** Remote execution on a REAPI engine (Buildbarn, BuildBuddy, NativeLink, EngFlow). */
  remote?: RemoteExecution
}

/** The workspace's `remote`: where and how tasks execute remotely. */
export interface RemoteExecution {
  /** Send every cacheable task that can run remotely to the engine. `--remote-exec`/`--no-remote-exec` override it. */
  execute?: boolean
  /** The engine's `grpc://` or `grpcs://` address. Default: `remoteCache.reapi`'s server. */
  executor?: string
  /** The properties a worker must match exactly, e.g. `{ OSFamily: 'linux' }`. */
  platform?: Record<string, string>
  /** How many tasks run remotely at once. */
  capacity?: number
  /** The `PATH` of every remote command (tasks and the install action), absolute folders separated by `:`; part of their Actions. Default: `'/usr/local/bin:/usr/bin:/bin'`. */
  path?: string
  /**
   * What of a run's remote work comes back to this machine: every task's outputs (`'all'`, the
   * default), those of the tasks named on the command line (`'outputs-of-requested'`), or only
   * what a task run on this machine needs (`'minimal'`). `vx run --download` overrides it.
   */
  download?: 'all' | 'outputs-of-requested' | 'minimal'
}

/** `remoteCache`: where the shared cache is, and how vx may use it. */
export interface RemoteCacheOptions {
  /** The server's base URL, http(s), without credentials; `VX_REMOTE_CACHE_URL` overrides it. */
  url?: string
  /** `'bazel'` (bazel-remote: `/ac/` and `/cas/`), `'turbo'` (the Turborepo `/v8/artifacts` API) or `'reapi'` (a Remote Execution API server over gRPC; `reapi` sets it). */
  protocol?: 'bazel' | 'turbo' | 'reapi'
  /** The environment variable the token is read from at run time (default `VX_REMOTE_CACHE_TOKEN`); a secret: `***` everywhere. */
  tokenEnv?: string
  /** The Turborepo team id (`teamId` query parameter). */
  team?: string
  /** The Turborepo team slug (`slug` query parameter). */
  slug?: string
  /** `'readwrite'` (default), `'read'` (never upload) or `'off'`; `vx run --remote-cache=…` overrides it. */
  mode?: 'readwrite' | 'read' | 'off'
  /** How long vx waits for the server's answer or its next byte before it stops using it for the run: `'5s'` (the default), `'500ms'`, or milliseconds. */
  timeout?: string | number
  /** Turborepo artifact signatures (`x-artifact-tag`): the variable holding the HMAC key. */
  signature?: { keyEnv: string }
  /** A Remote Execution API server (bazel-remote's gRPC port, Buildbarn, BuildBuddy, NativeLink): `'grpc://host:port'` (plain text) or `'grpcs://host:port'` (TLS); instead of `url`. */
  reapi?: string
  /** The REAPI instance name the server is asked under (default: the server's default instance). */
  instance?: string
  /** Headers sent with every REAPI call: a value, or `{ env: 'NAME' }` for a secret read from the environment at run time (`***` everywhere). */
  headers?: Record<string, string | { env: string }>
  /** A `grpcs://` server's TLS: `ca` the PEM roots its certificate must chain to (default: the system's), `cert` and `key` the client's certificate for mutual TLS, `serverName` the name its certificate holds; paths absolute or relative to the workspace root. */
  tls?: { ca?: string; cert?: string; key?: string; serverName?: string }
}

/** vx.project.ts: a project's name, tags, dependencies, and its changes to the templates. */
export interface ProjectConfig {
  /** The project's name (default: the `name` of its package.json, else its folder name). */
  name?: string
  /** Labels that `--filter tag:NAME` selects by. */
  tags?: string[]
  /** Names of projects this one depends on, beside its package.json dependencies. */
  dependsOn?: string[]
  /**
   * Per task name: an object that overrides the template field by field, `false` to leave the
   * template out, or a whole new task (which then needs a `command`).
   */
  tasks?: Record<string, Task | false>
}

/** The config of vx.workspace.ts: `export default defineWorkspace({ ... })`. Returns its argument. */
export declare function defineWorkspace(config: WorkspaceConfig): WorkspaceConfig

/** The config of a vx.project.ts: `export default defineProject({ ... })`. Returns its argument. */
export declare function defineProject(config: ProjectConfig): ProjectConfig

/** A plugin for `plugins`: `{ name, commands?, stage? }`. Returns its argument. */
export declare function definePlugin<P extends Plugin>(plugin: P): P
