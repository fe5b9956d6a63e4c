/**
 * `openrouter-mcp-config` as a user runs it, built: every flag round-trips, through the running service
 * and straight to the file; refused values change nothing and name their flag; keys reach the real
 * keychain only once OpenRouter accepts them and never appear in any output or file; the interactive
 * flow, driven through a real pseudo-terminal (util-linux `script`), reaches every setting a flag
 * changes, forgets saved verify commands, scrolls on a short terminal, saves on confirm and changes nothing on Ctrl-C.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LIST_SETTINGS, SCALAR_SETTINGS } from '../../src-main/cli/config/config-fields.js';
import { DEFAULT_APPROVABLE_TOOLS, defaultSettings, settingValue } from '../../src-main/contract/index.js';
import type { SecretsStatus, Settings } from '../../src-main/contract/index.js';
import { probeSandbox } from '../../src-main/platform/sandbox-probe.js';
import { resolveLocations } from '../../src-main/platform/locations.js';
import { IpcClient } from '../../src-main/ipc/client.js';
import type { SandboxAvailability } from '../../src-main/platform/sandbox-probe.js';
import { CLI, CONFIG_CLI, assertBuilt, runCli, runProcess, testEnv } from '../support/built.js';
import type { RunResult } from '../support/built.js';
import { CLAUDE_CLI } from '../support/fake-anthropic.js';
import { FakeOpenRouter } from '../support/fake-openrouter.js';
import { filesContaining, makeTempHome } from '../support/temp-home.js';
import { makeRepo } from '../support/git-repo.js';

const KEY = `sk-or-v1-${'c0ffee42'.repeat(8)}`;
const MANAGEMENT_KEY = `sk-or-v1-${'5eed1e55'.repeat(8)}`;
const REFUSED_KEY = `sk-or-v1-${'deadbeef'.repeat(8)}`;
const SECRETS = [KEY, MANAGEMENT_KEY, REFUSED_KEY];

const fake = new FakeOpenRouter();
beforeAll(async () => {
  assertBuilt();
  if (!existsSync(CONFIG_CLI)) throw new Error(`${CONFIG_CLI} is missing: run \`npm run build\`.`);
  await fake.start();
  fake.addKey(KEY);
  fake.addKey(MANAGEMENT_KEY, { management: true });
});
afterAll(() => fake.stop());

/** Everything any run printed, checked for keys at the end of each key test. */
const outputs: RunResult[] = [];

function config(args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<RunResult> {
  return runProcess(process.execPath, [CONFIG_CLI, ...args], { env, input }).then((result) => {
    outputs.push(result);
    return result;
  });
}

interface Shown {
  service: { running: boolean; pid: number | null };
  settingsFile: string;
  home: string | null;
  settings: Settings;
  secrets: SecretsStatus;
  sandbox: SandboxAvailability;
}

async function show(env: NodeJS.ProcessEnv): Promise<Shown> {
  const result = await config(['--show', '--json'], env);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Shown;
}

/** Starts `serve` in the foreground and resolves once it says it is ready. */
function serve(env: NodeJS.ProcessEnv): Promise<{ pid: number; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--notify-ready'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) resolve({ pid: child.pid ?? 0, exited });
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
}

type Route = 'through the running service' | 'without a service';
const ROUTES: Route[] = ['through the running service', 'without a service'];

interface Home {
  home: string;
  env: NodeJS.ProcessEnv;
  settingsFile: string;
  servicePid: number | null;
  close(): Promise<void>;
}

async function openHome(route: Route, openRouter = fake.baseUrl): Promise<Home> {
  const { home, cleanup } = await makeTempHome('ord-config-');
  const env = testEnv(home, openRouter);
  const service = route === 'through the running service' ? await serve(env) : null;
  return {
    home,
    env,
    settingsFile: path.join(home, 'config', 'settings.json'),
    servicePid: service?.pid ?? null,
    async close() {
      await config(['--remove-key', '--remove-management-key'], env);
      if (service) {
        await runCli(['stop'], env);
        await service.exited;
      }
      await cleanup();
    },
  };
}

async function bytesOf(file: string): Promise<Buffer | null> {
  return readFile(file).catch(() => null);
}

function expectNoSecrets(results: readonly RunResult[], transcript = ''): void {
  for (const secret of SECRETS) {
    for (const { stdout, stderr } of results) {
      expect(stdout).not.toContain(secret);
      expect(stderr).not.toContain(secret);
    }
    expect(transcript).not.toContain(secret);
  }
}

const defaults = defaultSettings();

interface RoundTrip {
  /** Calls made in order; each must succeed. */
  calls: string[][];
  expected: Partial<Settings>;
}

const budgets = (change: Partial<Settings['budgets']>): Partial<Settings> => ({ budgets: { ...defaults.budgets, ...change } });
const provider = (change: Partial<Settings['provider']>): Partial<Settings> => ({ provider: { ...defaults.provider, ...change } });

const ROUND_TRIPS: Record<string, RoundTrip> = {
  '--mode': { calls: [['--mode', 'auto']], expected: { mode: 'auto' } },
  '--mode off': { calls: [['--mode', 'off']], expected: { mode: 'off' } },
  '--default-model': { calls: [['--default-model', 'qwen/qwen3-coder']], expected: { defaultModel: 'qwen/qwen3-coder' } },
  '--fallback-model (repeated, in order)': {
    calls: [['--fallback-model', 'z-ai/glm-4.7', '--fallback-model', 'qwen/qwen3-coder']],
    expected: { fallbackModels: ['z-ai/glm-4.7', 'qwen/qwen3-coder'] },
  },
  '--unfallback-model': {
    calls: [
      ['--fallback-model', 'z-ai/glm-4.7', '--fallback-model', 'qwen/qwen3-coder'],
      ['--unfallback-model', 'z-ai/glm-4.7'],
    ],
    expected: { fallbackModels: ['qwen/qwen3-coder'] },
  },
  '--clear-fallback-models': { calls: [['--fallback-model', 'z-ai/glm-4.7'], ['--clear-fallback-models']], expected: { fallbackModels: [] } },
  '--allow (repeated)': { calls: [['--allow', 'qwen/*', '--allow', 'deepseek/*']], expected: { allowlist: ['qwen/*', 'deepseek/*'] } },
  '--unallow': {
    calls: [
      ['--allow', 'qwen/*', '--allow', 'deepseek/*'],
      ['--unallow', 'qwen/*'],
    ],
    expected: { allowlist: ['deepseek/*'] },
  },
  '--clear-allowlist': { calls: [['--allow', 'deepseek/*'], ['--clear-allowlist']], expected: { allowlist: [] } },
  '--block (repeated)': { calls: [['--block', 'openai/*', '--block', 'x-ai/grok-4']], expected: { blocklist: ['openai/*', 'x-ai/grok-4'] } },
  '--unblock': {
    calls: [
      ['--block', 'openai/*', '--block', 'x-ai/*'],
      ['--unblock', 'x-ai/*'],
    ],
    expected: { blocklist: ['openai/*'] },
  },
  '--clear-blocklist': { calls: [['--block', 'openai/*'], ['--clear-blocklist']], expected: { blocklist: [] } },
  '--approve-tool (repeated)': {
    calls: [['--approve-tool', 'Bash(npm test:*)', '--approve-tool', 'Edit']],
    expected: { approvableTools: [...DEFAULT_APPROVABLE_TOOLS, 'Bash(npm test:*)', 'Edit'] },
  },
  '--unapprove-tool': { calls: [['--unapprove-tool', 'Grep']], expected: { approvableTools: DEFAULT_APPROVABLE_TOOLS.filter((tool) => tool !== 'Grep') } },
  '--clear-approved-tools': { calls: [['--clear-approved-tools', '--approve-tool', '*']], expected: { approvableTools: ['*'] } },
  '--max-price-in': { calls: [['--max-price-in', '0.3']], expected: { maxPriceInputPerM: 0.3 } },
  '--max-price-in none': {
    calls: [
      ['--max-price-in', '0.3'],
      ['--max-price-in', 'none'],
    ],
    expected: { maxPriceInputPerM: null },
  },
  '--max-price-out': { calls: [['--max-price-out', '1.25']], expected: { maxPriceOutputPerM: 1.25 } },
  '--max-price-out none': {
    calls: [
      ['--max-price-out', '1.25'],
      ['--max-price-out', 'none'],
    ],
    expected: { maxPriceOutputPerM: null },
  },
  '--min-context': { calls: [['--min-context', '64000']], expected: { minContext: 64000 } },
  '--min-context none': {
    calls: [
      ['--min-context', '64000'],
      ['--min-context', 'none'],
    ],
    expected: { minContext: null },
  },
  '--budget-job': { calls: [['--budget-job', '0.25']], expected: budgets({ perJobUsd: 0.25 }) },
  '--budget-day': { calls: [['--budget-day', '2']], expected: budgets({ perDayUsd: 2 }) },
  '--reserve': { calls: [['--reserve', '0']], expected: budgets({ reserveUsd: 0 }) },
  '--allow-server-tools': { calls: [['--allow-server-tools', 'on']], expected: { gateway: { allowServerTools: true } } },
  '--allow-server-tools off': {
    calls: [
      ['--allow-server-tools', 'on'],
      ['--allow-server-tools', 'off'],
    ],
    expected: { gateway: { allowServerTools: false } },
  },
  '--max-permission': { calls: [['--max-permission', 'bypassPermissions']], expected: { permissionCeiling: 'bypassPermissions' } },
  '--permission-mode': { calls: [['--permission-mode', 'plan']], expected: { defaultPermissionMode: 'plan' } },
  '--profile': { calls: [['--profile', 'minimal']], expected: { delegateProfile: 'minimal' } },
  '--isolation': { calls: [['--isolation', 'none']], expected: { isolation: 'none' } },
  '--isolation worktree': {
    calls: [
      ['--isolation', 'none'],
      ['--isolation', 'worktree'],
    ],
    expected: { isolation: 'worktree' },
  },
  '--concurrency': { calls: [['--concurrency', '8']], expected: { concurrency: 8 } },
  '--timeout': { calls: [['--timeout', '90']], expected: { jobTimeoutMinutes: 90 } },
  '--retention-days': { calls: [['--retention-days', '7']], expected: { retentionDays: 7 } },
  '--fan-out-limit': { calls: [['--fan-out-limit', '4']], expected: { fanOutLimit: 4 } },
  '--verify-timeout': { calls: [['--verify-timeout', '20']], expected: { verifyTimeoutMinutes: 20 } },
  '--verify-concurrency': { calls: [['--verify-concurrency', '2']], expected: { verifyConcurrency: 2 } },
  '--verify-concurrency none': {
    calls: [
      ['--verify-concurrency', '2'],
      ['--verify-concurrency', 'none'],
    ],
    expected: { verifyConcurrency: null },
  },
  '--fix-rounds': { calls: [['--fix-rounds', '0']], expected: { fixRounds: 0 } },
  '--max-retries': { calls: [['--max-retries', '0']], expected: { delegateMaxRetries: 0 } },
  '--inline-answer': { calls: [['--inline-answer', '0']], expected: { inlineAnswerChars: 0 } },
  '--models-cache-ttl': { calls: [['--models-cache-ttl', '15']], expected: { modelsCacheTtlMinutes: 15 } },
  // A path that is no executable file is refused (below): this checkout's pinned `claude` is one.
  '--claude-path': { calls: [['--claude-path', CLAUDE_CLI]], expected: { claudePath: CLAUDE_CLI } },
  '--claude-path none': {
    calls: [
      ['--claude-path', CLAUDE_CLI],
      ['--claude-path', 'none'],
    ],
    expected: { claudePath: null },
  },
  '--data-collection': { calls: [['--data-collection', 'deny']], expected: provider({ dataCollection: 'deny' }) },
  '--zdr': { calls: [['--zdr', 'on']], expected: provider({ zdr: true }) },
  '--zdr off': {
    calls: [
      ['--zdr', 'on'],
      ['--zdr', 'off'],
    ],
    expected: provider({ zdr: false }),
  },
  '--provider-sort': { calls: [['--provider-sort', 'price']], expected: provider({ sort: 'price' }) },
  '--provider-sort none': {
    calls: [
      ['--provider-sort', 'latency'],
      ['--provider-sort', 'none'],
    ],
    expected: provider({ sort: 'none' }),
  },
  '--provider-only (repeated)': {
    calls: [['--provider-only', 'anthropic', '--provider-only', 'google-vertex']],
    expected: provider({ only: ['anthropic', 'google-vertex'] }),
  },
  '--unprovider-only': {
    calls: [
      ['--provider-only', 'anthropic', '--provider-only', 'openai'],
      ['--unprovider-only', 'openai'],
    ],
    expected: provider({ only: ['anthropic'] }),
  },
  '--clear-provider-only': { calls: [['--provider-only', 'anthropic'], ['--clear-provider-only']], expected: provider({ only: [] }) },
  '--provider-ignore (repeated)': {
    calls: [['--provider-ignore', 'deepinfra/turbo', '--provider-ignore', 'together']],
    expected: provider({ ignore: ['deepinfra/turbo', 'together'] }),
  },
  '--unprovider-ignore': {
    calls: [
      ['--provider-ignore', 'deepinfra', '--provider-ignore', 'together'],
      ['--unprovider-ignore', 'deepinfra'],
    ],
    expected: provider({ ignore: ['together'] }),
  },
  '--clear-provider-ignore': { calls: [['--provider-ignore', 'together'], ['--clear-provider-ignore']], expected: provider({ ignore: [] }) },
  '--allow-fallbacks': { calls: [['--allow-fallbacks', 'off']], expected: provider({ allowFallbacks: false }) },
  '--allow-fallbacks on': {
    calls: [
      ['--allow-fallbacks', 'off'],
      ['--allow-fallbacks', 'on'],
    ],
    expected: provider({ allowFallbacks: true }),
  },
  // Every sandbox flag in two cases (the unit test, tests/cli/config/config-sandbox-flags.test.ts, takes each apart).
  '--programs, --sandbox, --allow-domain, --deny-read, --clear-deny-read, --clear-allowed-domains': {
    calls: [
      ['--programs', 'ask-approval', '--sandbox', 'preferred', '--allow-domain', 'registry.npmjs.org', '--deny-read', '~/old'],
      ['--clear-deny-read', '--deny-read', '~/a', '--deny-read', '/srv/b', '--clear-allowed-domains', '--allow-domain', 'GitHub.com'],
    ],
    expected: { sandbox: { programs: 'ask-approval', use: 'preferred', allowedDomains: ['github.com'], denyRead: ['~/a', '/srv/b'] } },
  },
  '--unallow-domain, --undeny-read': {
    calls: [
      ['--allow-domain', 'registry.npmjs.org', '--allow-domain', 'pypi.org', '--deny-read', '~/a', '--deny-read', '/srv/b'],
      ['--unallow-domain', 'PyPI.org', '--undeny-read', '~/a'],
    ],
    expected: { sandbox: { ...defaults.sandbox, allowedDomains: ['registry.npmjs.org'], denyRead: ['/srv/b'] } },
  },
  'several flags in one call': {
    calls: [
      [
        '--mode',
        'off',
        '--budget-day',
        '1.5',
        '--concurrency',
        '1',
        '--allow',
        'qwen/*',
        '--default-model',
        'qwen/qwen3-coder',
        '--max-permission',
        'plan',
        '--permission-mode',
        'plan',
      ],
    ],
    expected: {
      mode: 'off',
      budgets: { ...defaults.budgets, perDayUsd: 1.5 },
      concurrency: 1,
      allowlist: ['qwen/*'],
      defaultModel: 'qwen/qwen3-coder',
      permissionCeiling: 'plan',
      defaultPermissionMode: 'plan',
    },
  },
};

/** [arguments, the flag the message must name, a fragment of what is wrong] */
const INVALID: Array<[string[], string, string]> = [
  [['--budget-day', 'abc'], '--budget-day', 'not a number'],
  [['--budget-day', '-1'], '--budget-day', 'negative'],
  [['--budget-job', '1e999'], '--budget-job', 'exponent notation'],
  [['--reserve', '$5'], '--reserve', 'without "$"'],
  [['--max-price-in', 'cheap'], '--max-price-in', 'not a number'],
  [['--max-price-out', '-0.5'], '--max-price-out', 'negative'],
  [['--min-context', '0'], '--min-context', 'Too small'],
  [['--concurrency', '0'], '--concurrency', 'Too small'],
  [['--concurrency', '2.5'], '--concurrency', 'not a whole number'],
  [['--timeout', '99999999999999999999999'], '--timeout', 'too large'],
  [['--timeout', '5000'], '--timeout', 'Too big'],
  [['--max-retries', '11'], '--max-retries', 'Too big'],
  [['--mode', 'fast'], '--mode', 'expected one of: off, ondemand, auto'],
  [['--max-permission', 'root'], '--max-permission', 'expected one of: plan'],
  [['--profile', 'tiny'], '--profile', 'expected one of: minimal'],
  [['--isolation', 'branch'], '--isolation', 'expected one of: worktree, none'],
  [['--permission-mode', 'bypassPermissions'], '--permission-mode', 'above the permission ceiling "acceptEdits"'],
  [['--default-model', 'qwen/*'], '--default-model', 'not a pattern'],
  [['--default-model', 'qwen'], '--default-model', 'expected a model id'],
  [['--allow', 'qwen'], '--allow', 'expected a model id'],
  [['--fallback-model', 'qwen/*'], '--fallback-model', 'a fallback model must be a model id, not a pattern'],
  [['--fallback-model', 'a/1', '--fallback-model', 'b/2', '--fallback-model', 'c/3', '--fallback-model', 'd/4'], '--fallback-model', 'Too big'],
  [['--unfallback-model', 'z-ai/glm-4.7'], '--unfallback-model', 'not in the fallback models'],
  [['--allow', ''], '--allow', 'expected a model id'],
  [['--unallow', 'qwen/*'], '--unallow', 'not in the allowlist'],
  [['--unblock', 'openai/*'], '--unblock', 'not in the blocklist'],
  [['--claude-path', ''], '--claude-path', 'Too small'],
  [['--approve-tool', 'rm -rf /'], '--approve-tool', 'expected a tool like "Read"'],
  [['--unapprove-tool', 'Bash'], '--unapprove-tool', 'not in the tools Claude Code may pre-approve'],
  [['--data-collection', 'never'], '--data-collection', 'expected one of: allow, deny'],
  [['--zdr', 'yes'], '--zdr', 'expected on or off'],
  [['--allow-server-tools', 'maybe'], '--allow-server-tools', 'expected on or off'],
  [['--provider-sort', 'fastest'], '--provider-sort', 'expected one of: none, price, throughput, latency'],
  [['--provider-only', ''], '--provider-only', 'expected a provider name'],
  [['--provider-ignore', 'x'.repeat(101)], '--provider-ignore', 'at most 100 characters'],
  [['--provider-ignore', 'deep\u0007infra'], '--provider-ignore', 'no control characters'],
  [['--unprovider-only', 'anthropic'], '--unprovider-only', 'not in the providers to use'],
  [['--provider-only', 'anthropic', '--provider-ignore', 'Anthropic'], '--provider-ignore', 'both among the providers to use and the providers to skip'],
  [['--allow-fallbacks', 'maybe'], '--allow-fallbacks', 'expected on or off'],
  [['--sandbox', 'off'], '--programs', 'programs "sandboxed" needs the sandbox'],
  // One bad value refuses the whole call, the good flags included.
  [['--mode', 'off', '--concurrency', '5', '--budget-day', 'abc'], '--budget-day', 'not a number'],
  [['--zdr', 'on', '--provider-only', 'anthropic', '--provider-sort', 'cheapest'], '--provider-sort', 'expected one of'],
];

const DOWN = '\x1b[B';
const UP = '\x1b[A';
const ENTER = '\r';
const SPACE = ' ';
const CTRL_C = '\x03';
/** Leaves a list's editor: Add, Remove, Empty, Done. */
const LIST_DONE = DOWN.repeat(3) + ENTER;
/** The main menu, in order (src-main/cli/config/config-interactive.ts). */
const MENU = [
  'key',
  'mode',
  'model',
  'fallbackModels',
  'allowlist',
  'blocklist',
  'providers',
  'budgets',
  'permissions',
  'approvableTools',
  'isolation',
  'sandbox',
  'limits',
  'other',
  'save',
  'quit',
] as const;
function move(from: (typeof MENU)[number], to: (typeof MENU)[number]): string {
  return DOWN.repeat(MENU.indexOf(to) - MENU.indexOf(from));
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][A-Za-z0-9]|\r/g, '');
}

/** The config CLI on a real pseudo-terminal: keys go in, the screen text comes out. */
class Terminal {
  private readonly child: ChildProcessWithoutNullStreams;
  private raw = '';
  /** How far into the (stripped) screen text earlier waits have matched. */
  private seen = 0;
  private waiters = new Set<() => void>();
  readonly exited: Promise<number | null>;

  /** `cwd`: where the menu runs, which decides the verify commands it suggests; default the home (no repository). */
  constructor(env: NodeJS.ProcessEnv, rows: number, cwd = env.OPENROUTER_DELEGATE_HOME) {
    const command = `stty cols 220 rows ${rows} && exec ${shellQuote(process.execPath)} ${shellQuote(CONFIG_CLI)}`;
    this.child = spawn('script', ['-qfec', command, '/dev/null'], { env: { ...env, TERM: 'xterm-256color' }, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (d: Buffer) => this.onOutput(d.toString()));
    this.child.stderr.on('data', (d: Buffer) => this.onOutput(d.toString()));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
    void this.exited.then(() => this.onOutput(''));
  }

  get transcript(): string {
    return stripAnsi(this.raw);
  }

  /** Resolves once `text` appears after what the previous wait matched (the screen is redrawn often). */
  waitFor(text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const at = this.transcript.indexOf(text, this.seen);
        if (at >= 0) {
          this.seen = at + text.length;
          this.waiters.delete(check);
          resolve();
          return;
        }
        if (this.child.exitCode !== null || this.child.signalCode !== null) {
          this.waiters.delete(check);
          reject(new Error(`The program ended before showing ${JSON.stringify(text)}. Screen:\n${this.transcript}`));
        }
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Types into the terminal, once the prompt that should receive it is on screen. */
  async answer(prompt: string, keys: string): Promise<void> {
    await this.waitFor(prompt);
    this.child.stdin.write(keys);
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }

  private onOutput(text: string): void {
    this.raw += text;
    for (const waiter of [...this.waiters]) waiter();
  }
}

const terminals: Terminal[] = [];
/** 80 rows show the whole menu; fewer make clack scroll it. */
function terminal(env: NodeJS.ProcessEnv, rows = 80, cwd?: string): Terminal {
  const t = new Terminal(env, rows, cwd);
  terminals.push(t);
  return t;
}
afterEach(() => {
  while (terminals.length) terminals.pop()?.kill();
});

describe.each(ROUTES)('openrouter-mcp-config %s', (route) => {
  let h: Home;
  beforeAll(async () => {
    h = await openHome(route);
  });
  afterAll(() => h.close());
  /** Set by a test that may store a key: the keys go after it (a run of the CLI, which most tests need not pay). */
  let storesKeys = false;
  beforeEach(async () => {
    // Each test starts from the defaults (the service re-reads the file before every update) and no keys.
    await rm(h.settingsFile, { force: true });
  });
  afterEach(async () => {
    if (!storesKeys) return;
    storesKeys = false;
    expect((await config(['--remove-key', '--remove-management-key'], h.env)).code).toBe(0);
  });

  describe('round-trips every flag (set, then read back)', () => {
    it.each(Object.entries(ROUND_TRIPS))('%s', async (_name, { calls, expected }) => {
      let last: RunResult | undefined;
      for (const args of calls) {
        last = await config(args, h.env);
        expect(last.code, last.stderr).toBe(0);
      }
      expect(last?.stdout).toContain(route === 'through the running service' ? `through the running service (pid ${h.servicePid})` : 'in the settings file');
      // Both paths end in the one settings file.
      expect(JSON.parse(await readFile(h.settingsFile, 'utf8'))).toEqual({ ...defaults, ...expected });
      // And the running service holds what it wrote, asked on its socket (--show says so in its own tests, below).
      if (route === 'through the running service') {
        const client = await IpcClient.connect({ locations: resolveLocations(h.env), clientName: 'config-cli-test' });
        try {
          expect(await client.call('settings.get', {})).toEqual({ ...defaults, ...expected });
        } finally {
          client.close();
        }
      }
    });
  });

  // One test walks the whole table: each value is refused and changes nothing, so each starts where the last left off.
  it('refuses each invalid value, naming the flag, and changes nothing', { timeout: 180_000 }, async () => {
    expect((await config(['--mode', 'auto'], h.env)).code).toBe(0);
    const before = await bytesOf(h.settingsFile);
    for (const [args, flag, fragment] of INVALID) {
      const result = await config(args, h.env);
      const call = JSON.stringify(args);
      expect(result.code, call).toBe(1);
      expect(result.stderr, call).toContain(flag);
      expect(result.stderr, call).toContain(fragment);
      expect(result.stderr, call).toContain('Nothing was changed.');
      expect(await bytesOf(h.settingsFile), call).toEqual(before);
    }
    expect((await show(h.env)).settings).toEqual({ ...defaults, mode: 'auto' });
  });

  it('--show --json reads back what the flags wrote, and says where from', async () => {
    expect((await config(['--mode', 'auto', '--budget-day', '2', '--allow', 'qwen/*', '--default-model', 'qwen/qwen3-coder'], h.env)).code).toBe(0);
    const shown = await show(h.env);
    expect(shown.service).toEqual({ running: route === 'through the running service', pid: h.servicePid });
    expect(shown.settingsFile).toBe(h.settingsFile);
    const expected = { ...defaults, mode: 'auto', budgets: { ...defaults.budgets, perDayUsd: 2 }, allowlist: ['qwen/*'], defaultModel: 'qwen/qwen3-coder' };
    expect(shown.settings).toEqual(expected);
    expect(JSON.parse(await readFile(h.settingsFile, 'utf8'))).toEqual(expected);
  });

  it('refuses a default model outside the allowlist, saying how to fix it', async () => {
    expect((await config(['--budget-job', '0.2'], h.env)).code).toBe(0);
    const before = await bytesOf(h.settingsFile);
    const outside = await config(['--allow', 'qwen/*'], h.env);
    expect(outside.code).toBe(1);
    expect(outside.stderr).toContain('--default-model (defaultModel): "deepseek/deepseek-v4-flash-0731" is not in the allowlist (qwen/*)');
    expect(outside.stderr).toContain('allow it or pick a default model from the allowlist');
    const blocked = await config(['--block', 'deepseek/*'], h.env);
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toContain('is blocked by "deepseek/*"');
    const direct = await config(['--default-model', 'x-ai/grok-4', '--allow', 'qwen/*'], h.env);
    expect(direct.code).toBe(1);
    expect(direct.stderr).toContain('"x-ai/grok-4" is not in the allowlist');
    expect(await bytesOf(h.settingsFile)).toEqual(before);
    // The same change with a default model from the allowlist, in one call, is accepted.
    expect((await config(['--allow', 'qwen/*', '--default-model', 'qwen/qwen3-coder'], h.env)).code).toBe(0);
    expect((await show(h.env)).settings).toMatchObject({ allowlist: ['qwen/*'], defaultModel: 'qwen/qwen3-coder' });
  });

  it('refuses a model OpenRouter does not list, naming it and the closest ids, and changes nothing', async () => {
    expect((await config(['--mode', 'auto'], h.env)).code).toBe(0);
    const before = await bytesOf(h.settingsFile);
    const result = await config(['--budget-day', '2', '--default-model', 'deepseek/deepseek-v5'], h.env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'openrouter-mcp-config: Settings not changed: defaultModel: OpenRouter has no model "deepseek/deepseek-v5". ' +
        'Did you mean deepseek/deepseek-r1, deepseek/deepseek-v4-pro-0813, deepseek/deepseek-v4-flash-0731 or deepseek/deepseek-v4-pro?\n',
    );
    const fallback = await config(['--fallback-model', 'z-ai/glm-4.7', '--fallback-model', 'qwen/qwen3-codr'], h.env);
    expect(fallback.code).toBe(1);
    expect(fallback.stderr).toMatch(/fallbackModels: OpenRouter has no model "qwen\/qwen3-codr"\. Did you mean qwen\/qwen3-coder/);
    expect(await bytesOf(h.settingsFile)).toEqual(before);
    expect((await show(h.env)).settings).toEqual({ ...defaults, mode: 'auto' });
  });

  it('takes a model OpenRouter lists, with nothing to warn about', async () => {
    const result = await config(['--default-model', 'deepseek/deepseek-v4-pro', '--fallback-model', 'z-ai/glm-4.7'], h.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Default model: deepseek/deepseek-v4-flash-0731 → deepseek/deepseek-v4-pro');
    expect(result.stderr).toBe('');
    expect((await show(h.env)).settings).toMatchObject({ defaultModel: 'deepseek/deepseek-v4-pro', fallbackModels: ['z-ai/glm-4.7'] });
  });

  it('refuses a claude path that is no executable file, and changes nothing', async () => {
    expect((await config(['--mode', 'auto'], h.env)).code).toBe(0);
    const before = await bytesOf(h.settingsFile);
    const missing = await config(['--claude-path', '/nonexistent'], h.env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      'openrouter-mcp-config: Settings not changed: claudePath: /nonexistent does not exist: give the full path of `claude` (`command -v claude` prints it).\n',
    );
    const folder = await config(['--claude-path', h.home], h.env);
    expect(folder.code).toBe(1);
    expect(folder.stderr).toContain(`claudePath: ${h.home} is a folder, not a program`);
    expect(await bytesOf(h.settingsFile)).toEqual(before);
  });

  it('--set-key refuses a key OpenRouter rejects and stores nothing', async () => {
    storesKeys = true;
    const result = await config(['--set-key'], h.env, REFUSED_KEY);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('OpenRouter rejected the key (401)');
    expect(result.stderr).toContain('was not stored');
    // Said where the user is: not sent to another command to do what they just did.
    expect(result.stderr).not.toContain('openrouter-delegate key set');
    expect((await show(h.env)).secrets.apiKey).toEqual({ present: false, source: 'none' });
    expect(fake.requestsTo('/api/v1/key').some((r) => r.headers.authorization === `Bearer ${REFUSED_KEY}`)).toBe(true);
    expect(await filesContaining(h.home, REFUSED_KEY)).toEqual([]);
    expectNoSecrets(outputs);
  });

  it('--set-key stores an accepted key in the keychain, --remove-key removes it, and the key is nowhere else', async () => {
    storesKeys = true;
    const set = await config(['--set-key'], h.env, `${KEY}\n`);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain('accepted by OpenRouter and stored in the OS keychain');
    const shown = await show(h.env);
    expect(shown.secrets.apiKey).toEqual({ present: true, source: 'keychain' });
    expect(shown.secrets.keychain.available).toBe(true);
    const text = await config(['--show'], h.env);
    expect(text.stdout).toMatch(/OpenRouter key:\s+in the OS keychain/);
    expect(await filesContaining(h.home, KEY)).toEqual([]);

    const removed = await config(['--remove-key'], h.env);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain('removed from the OS keychain');
    expect((await show(h.env)).secrets.apiKey).toEqual({ present: false, source: 'none' });
    expectNoSecrets(outputs);
  });

  it('--set-management-key checks the key with /credits; --remove-management-key removes it', async () => {
    storesKeys = true;
    const normal = await config(['--set-management-key'], h.env, KEY);
    expect(normal.code).toBe(1);
    expect(normal.stderr).toContain('not a management key');
    expect((await show(h.env)).secrets.managementKey).toEqual({ present: false, source: 'none' });

    const set = await config(['--set-management-key'], h.env, MANAGEMENT_KEY);
    expect(set.code, set.stderr).toBe(0);
    expect((await show(h.env)).secrets.managementKey).toEqual({ present: true, source: 'keychain' });
    expect(await filesContaining(h.home, MANAGEMENT_KEY)).toEqual([]);
    expect((await config(['--remove-management-key'], h.env)).code).toBe(0);
    expect((await show(h.env)).secrets.managementKey).toEqual({ present: false, source: 'none' });
    expectNoSecrets(outputs);
  });

  it('a key and settings in one call: all or nothing', async () => {
    storesKeys = true;
    expect((await config(['--budget-job', '0.2'], h.env)).code).toBe(0);
    const before = await bytesOf(h.settingsFile);
    // A refused key stops the settings change too.
    const refused = await config(['--set-key', '--mode', 'off'], h.env, REFUSED_KEY);
    expect(refused.code).toBe(1);
    expect(await bytesOf(h.settingsFile)).toEqual(before);
    // An invalid setting stops the key: it is not even read.
    const invalid = await config(['--set-key', '--budget-day', 'abc'], h.env, KEY);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('--budget-day');
    expect((await show(h.env)).secrets.apiKey.present).toBe(false);
    expect(await bytesOf(h.settingsFile)).toEqual(before);
    // Both good: both applied.
    const both = await config(['--set-key', '--mode', 'off'], h.env, KEY);
    expect(both.code, both.stderr).toBe(0);
    const shown = await show(h.env);
    expect(shown.secrets.apiKey.source).toBe('keychain');
    expect(shown.settings.mode).toBe('off');
    expectNoSecrets(outputs);
  });

  it('shows the provider policy in --show as the flags write it, and --json the same', async () => {
    const set = await config(
      [
        '--data-collection',
        'deny',
        '--zdr',
        'on',
        '--provider-sort',
        'price',
        '--provider-only',
        'anthropic',
        '--provider-ignore',
        'together',
        '--allow-fallbacks',
        'off',
      ],
      h.env,
    );
    expect(set.code, set.stderr).toBe(0);
    const text = (await config(['--show'], h.env)).stdout;
    // Whether this machine has the sandbox, one line (the service's answer when it runs), and the same in --json.
    expect(text).toMatch(/^Sandbox: {10}(available: .+|NOT available: .+\. Fix: .+)$/m);
    expect((await show(h.env)).sandbox).toEqual(await probeSandbox({ env: h.env }));
    for (const [label, value, flag] of [
      ['Data collection', 'deny', '--data-collection'],
      ['Zero data retention only', 'on', '--zdr'],
      ['Sort providers by', 'price', '--provider-sort'],
      ['Providers to use', 'anthropic', '--provider-only/--unprovider-only'],
      ['Providers to skip', 'together', '--provider-ignore/--unprovider-ignore'],
      ['Provider fallbacks', 'off', '--allow-fallbacks'],
    ]) {
      expect(text).toMatch(new RegExp(`^${label}:\\s+${value}\\s+${flag}$`, 'm'));
    }
    expect((await show(h.env)).settings.provider).toEqual({
      dataCollection: 'deny',
      zdr: true,
      sort: 'price',
      only: ['anthropic'],
      ignore: ['together'],
      allowFallbacks: false,
    });
  });

  it('shows the fallback models in --show as the flags write them, and --json the same', async () => {
    const set = await config(['--fallback-model', 'z-ai/glm-4.7', '--fallback-model', 'qwen/qwen3-coder'], h.env);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain("Fallback models: (empty: the job's own model only) → z-ai/glm-4.7, qwen/qwen3-coder");
    const text = (await config(['--show'], h.env)).stdout;
    expect(text).toMatch(/^Fallback models:\s+z-ai\/glm-4\.7, qwen\/qwen3-coder\s+--fallback-model\/--unfallback-model$/m);
    expect((await show(h.env)).settings.fallbackModels).toEqual(['z-ai/glm-4.7', 'qwen/qwen3-coder']);
  });

  it('--json keeps stdout to the JSON state, also after a change', async () => {
    const result = await config(['--concurrency', '4', '--json'], h.env);
    expect(result.code).toBe(0);
    const state = JSON.parse(result.stdout) as Shown;
    expect(state.settings.concurrency).toBe(4);
    expect(result.stderr).toContain('Concurrency: 3 → 4');
  });

  describe('interactively, in a terminal', () => {
    it('sets the mode and a budget, shows the changes and saves them on confirm', async () => {
      const t = terminal(h.env);
      await t.answer('What would you like to change?', move('key', 'mode') + ENTER);
      await t.answer('Delegation mode', DOWN + ENTER); // ondemand → auto
      await t.answer('Mode: auto (changed)', move('mode', 'budgets') + ENTER);
      await t.answer('Budget per job in $', ENTER); // Enter keeps it
      await t.answer('Budget per day in $', `2${ENTER}`);
      await t.answer('Reserve in $', ENTER);
      await t.answer('Server tools and URL sources: let delegates', ENTER); // Enter keeps off
      await t.answer('Review and save (2 changes)', move('budgets', 'save') + ENTER);
      await t.waitFor('Mode: ondemand → auto');
      await t.waitFor('Budget per day: $5.00 → $2.00');
      await t.answer('Save these changes?', ENTER);
      await t.waitFor('Saved');
      expect(await t.exited).toBe(0);
      expect((await show(h.env)).settings).toEqual({ ...defaults, mode: 'auto', budgets: { ...defaults.budgets, perDayUsd: 2 } });
    });

    it('changes nothing when cancelled with Ctrl-C, even at the final confirmation', async () => {
      expect((await config(['--budget-job', '0.2'], h.env)).code).toBe(0);
      const before = await bytesOf(h.settingsFile);
      const t = terminal(h.env);
      await t.answer('What would you like to change?', move('key', 'mode') + ENTER);
      await t.answer('Delegation mode', DOWN + ENTER);
      await t.answer('Mode: auto (changed)', move('mode', 'budgets') + ENTER);
      await t.answer('Budget per job in $', `1${ENTER}`);
      await t.answer('Budget per day in $', ENTER);
      await t.answer('Reserve in $', ENTER);
      await t.answer('Server tools and URL sources: let delegates', ENTER);
      await t.answer('Review and save', move('budgets', 'save') + ENTER);
      await t.answer('Save these changes?', CTRL_C);
      await t.waitFor('Cancelled: nothing changed.');
      expect(await t.exited).toBe(130);
      expect(await bytesOf(h.settingsFile)).toEqual(before);
      expect((await show(h.env)).settings).toEqual({ ...defaults, budgets: { ...defaults.budgets, perJobUsd: 0.2 } });
    });

    it('takes the key hidden, checks it with OpenRouter, and stores it only on save', async () => {
      storesKeys = true;
      const t = terminal(h.env);
      await t.answer('What would you like to change?', ENTER); // OpenRouter key
      await t.answer('Set the OpenRouter key', ENTER);
      await t.answer('OpenRouter key (input hidden', `${KEY}${ENTER}`);
      await t.waitFor('OpenRouter accepted the key');
      // Not stored yet: nothing is until the user saves.
      expect((await show(h.env)).secrets.apiKey.present).toBe(false);
      await t.answer('What would you like to change?', move('key', 'save') + ENTER);
      await t.answer('Save these changes?', ENTER);
      await t.waitFor('Saved');
      expect(await t.exited).toBe(0);
      expect((await show(h.env)).secrets.apiKey).toEqual({ present: true, source: 'keychain' });
      expect(await filesContaining(h.home, KEY)).toEqual([]);
      expectNoSecrets(outputs, t.transcript);
    });

    it('explains a refused change, lets the user fix it by picking a model from the catalog, then saves', async () => {
      const t = terminal(h.env);
      await t.answer('What would you like to change?', move('key', 'allowlist') + ENTER);
      await t.answer('Add model ids or vendor/* patterns', ENTER);
      await t.answer('Add to the allowlist', `qwen/*${ENTER}`);
      await t.answer('Allowlist: qwen/*', DOWN.repeat(3) + ENTER); // Add, Remove, Empty, Done
      await t.answer('Review and save (1 change)', move('allowlist', 'save') + ENTER);
      await t.waitFor('These settings cannot be saved');
      await t.waitFor('Default model: "deepseek/deepseek-v4-flash-0731" is not in the allowlist (qwen/*)');
      expect(await bytesOf(h.settingsFile)).toBeNull();
      // Back in the menu: search the live catalog for a model the allowlist allows.
      await t.answer('What would you like to change?', UP.repeat(MENU.indexOf('save') - MENU.indexOf('model')) + ENTER);
      await t.answer('Default model: type to search', `qwen3-coder-flash${ENTER}`);
      await t.answer('Default model: qwen/qwen3-coder-flash (changed)', move('model', 'save') + ENTER);
      await t.waitFor('Default model: deepseek/deepseek-v4-flash-0731 → qwen/qwen3-coder-flash');
      await t.answer('Save these changes?', ENTER);
      await t.waitFor('Saved');
      expect(await t.exited).toBe(0);
      expect((await show(h.env)).settings).toEqual({ ...defaults, allowlist: ['qwen/*'], defaultModel: 'qwen/qwen3-coder-flash' });
    });

    it('reaches every setting a flag changes: each changed through the menu, saved, and read back', async () => {
      const t = terminal(h.env);
      await t.answer('What would you like to change?', move('key', 'mode') + ENTER);
      await t.answer('Delegation mode', DOWN + ENTER); // ondemand → auto
      await t.answer('Mode: auto (changed)', move('mode', 'model') + ENTER);
      await t.answer('Default model: type to search', `qwen3-coder-flash${ENTER}`);
      await t.answer('Default model: qwen/qwen3-coder-flash (changed)', move('model', 'fallbackModels') + ENTER);
      await t.answer('Add model ids', ENTER);
      await t.answer('Add to the fallback models', `z-ai/glm-4.7 qwen/qwen3-coder${ENTER}`);
      await t.answer('Fallback models: z-ai/glm-4.7, qwen/qwen3-coder', LIST_DONE);
      await t.answer('Fallback models: z-ai/glm-4.7, qwen/qwen3-coder (changed)', move('fallbackModels', 'allowlist') + ENTER);
      await t.answer('Add model ids or vendor/* patterns', ENTER);
      await t.answer('Add to the allowlist', `qwen/*${ENTER}`);
      await t.answer('Allowlist: qwen/*', LIST_DONE);
      await t.answer('Allowlist: qwen/* (changed)', move('allowlist', 'blocklist') + ENTER);
      await t.answer('Add model ids or vendor/* patterns', ENTER);
      await t.answer('Add to the blocklist', `openai/*${ENTER}`);
      await t.answer('Blocklist: openai/*', LIST_DONE);
      await t.answer('Blocklist: openai/* (changed)', move('blocklist', 'providers') + ENTER);
      // The provider policy's own menu: each setting, then Back. A prompt is told from the menu line by its help.
      await t.answer('Providers (OpenRouter provider routing): which to change?', ENTER);
      await t.answer('Data collection: deny: only providers', DOWN + ENTER); // allow → deny
      await t.answer('Data collection: deny (changed)', DOWN + ENTER);
      await t.answer('Zero data retention only: only provider endpoints', UP + ENTER); // on, off: off → on
      await t.answer('Zero data retention only: on (changed)', DOWN + ENTER);
      await t.answer('Sort providers by: try the cheapest', DOWN + ENTER); // none → price
      await t.answer('Sort providers by: price (changed)', DOWN + ENTER);
      await t.answer('Add OpenRouter providers', ENTER);
      await t.answer('Add to the providers to use', `anthropic${ENTER}`);
      await t.answer('Providers to use: anthropic', LIST_DONE);
      await t.answer('Providers to use: anthropic (changed)', DOWN + ENTER);
      await t.answer('Add OpenRouter providers', ENTER);
      await t.answer('Add to the providers to skip', `together${ENTER}`);
      await t.answer('Providers to skip: together', LIST_DONE);
      await t.answer('Providers to skip: together (changed)', DOWN + ENTER);
      await t.answer('Provider fallbacks: whether OpenRouter', DOWN + ENTER); // on → off
      await t.answer('Provider fallbacks: off (changed)', DOWN + ENTER); // Back
      await t.answer(
        'Providers: data collection deny, ZDR on, sort price, only anthropic, ignore together, fallbacks off (changed)',
        move('providers', 'budgets') + ENTER,
      );
      await t.answer('Budget per job in $', `0.25${ENTER}`);
      await t.answer('Budget per day in $', `2${ENTER}`);
      await t.answer('Reserve in $', `0${ENTER}`);
      await t.answer('Server tools and URL sources: let delegates', UP + ENTER); // on, off: off → on
      await t.answer('Budgets: $0.25 per job, $2.00 per day, $0.00 reserve, server tools on (changed)', move('budgets', 'permissions') + ENTER);
      await t.answer('Permission ceiling: the most', DOWN.repeat(2) + ENTER); // acceptEdits → bypassPermissions
      await t.answer('Default permission mode: what', UP.repeat(3) + ENTER); // acceptEdits → plan
      await t.answer('Delegate profile: the tools', UP + ENTER); // lean → minimal
      await t.answer('Permissions: ceiling bypassPermissions, default plan, profile minimal (changed)', move('permissions', 'approvableTools') + ENTER);
      await t.answer('Add tools or rules', ENTER);
      await t.answer('Add to the tools Claude Code may pre-approve', `Edit${ENTER}`);
      await t.answer('Agent, Edit', LIST_DONE);
      await t.answer('Agent, Edit (changed)', move('approvableTools', 'isolation') + ENTER);
      await t.answer('Isolation: worktree: a delegation', DOWN + ENTER); // worktree → none
      await t.answer('Fan-out limit: the most models', `5${ENTER}`);
      await t.answer('Verify command timeout in minutes: the longest one', `20${ENTER}`);
      await t.answer('Verify commands at once: jobs whose verify commands', `2${ENTER}`);
      await t.answer('Fix rounds: how often', `2${ENTER}`);
      await t.answer('Isolation: none, fan-out up to 5 (changed)', move('isolation', 'sandbox') + ENTER);
      // The programs and sandbox menu says first whether this machine has the sandbox.
      await t.answer('Programs and sandbox (the sandbox here:', ENTER);
      await t.answer('Programs: how a delegate may run programs', DOWN + ENTER); // sandboxed → ask-approval
      await t.answer('Programs: ask-approval (changed)', DOWN + ENTER);
      await t.answer('Sandbox: required: a delegate', DOWN + ENTER); // required → preferred
      await t.answer('Sandbox: preferred (changed)', DOWN + ENTER);
      await t.answer('Add domains', ENTER);
      await t.answer('Add to the domains programs may reach', `registry.npmjs.org${ENTER}`);
      await t.answer('Domains programs may reach: registry.npmjs.org', LIST_DONE);
      await t.answer('Domains programs may reach: registry.npmjs.org (changed)', DOWN + ENTER);
      await t.answer('Add absolute or ~/ paths', ENTER);
      await t.answer('Add to the paths programs may not read', `~/private${ENTER}`);
      await t.answer('More paths programs may not read: ~/private', LIST_DONE);
      await t.answer('More paths programs may not read: ~/private (changed)', DOWN + ENTER); // Back
      await t.answer(
        'Programs and sandbox: programs ask-approval, sandbox preferred, domains registry.npmjs.org, also unreadable ~/private (changed)',
        move('sandbox', 'limits') + ENTER,
      );
      await t.answer('Max input price in $ per million tokens', `0.5${ENTER}`);
      await t.answer('Max output price in $ per million tokens', `2${ENTER}`);
      await t.answer('Minimum context in tokens', `64000${ENTER}`);
      await t.answer('Concurrency: jobs at once', `8${ENTER}`);
      await t.answer('Job timeout in minutes', `90${ENTER}`);
      await t.answer('Limits: prices, context, concurrency 8, timeout 1 h 30 min (changed)', move('limits', 'other') + ENTER);
      await t.answer('Job history kept in days', `7${ENTER}`);
      await t.answer('Answers shown at once in characters', `2000${ENTER}`);
      await t.answer('Delegate retries: how often', `0${ENTER}`);
      await t.answer('Model list cache in minutes', `15${ENTER}`);
      await t.answer('claude executable: the claude CLI', `${CLAUDE_CLI}${ENTER}`);
      await t.answer(`Other: history 7 days, retries 0, model list cache 15 min, claude ${CLAUDE_CLI} (changed)`, move('other', 'save') + ENTER);
      await t.waitFor("Fallback models: (empty: the job's own model only) → z-ai/glm-4.7, qwen/qwen3-coder");
      await t.waitFor('Isolation: worktree → none');
      await t.waitFor('Data collection: allow → deny');
      await t.answer('Save these changes?', ENTER);
      await t.waitFor('Saved');
      expect(await t.exited).toBe(0);

      const expected: Settings = {
        ...defaults,
        mode: 'auto',
        defaultModel: 'qwen/qwen3-coder-flash',
        fallbackModels: ['z-ai/glm-4.7', 'qwen/qwen3-coder'],
        allowlist: ['qwen/*'],
        blocklist: ['openai/*'],
        provider: { dataCollection: 'deny', zdr: true, sort: 'price', only: ['anthropic'], ignore: ['together'], allowFallbacks: false },
        budgets: { perJobUsd: 0.25, perDayUsd: 2, reserveUsd: 0 },
        gateway: { allowServerTools: true },
        permissionCeiling: 'bypassPermissions',
        defaultPermissionMode: 'plan',
        delegateProfile: 'minimal',
        approvableTools: [...DEFAULT_APPROVABLE_TOOLS, 'Edit'],
        isolation: 'none',
        fanOutLimit: 5,
        verifyTimeoutMinutes: 20,
        verifyConcurrency: 2,
        fixRounds: 2,
        sandbox: { programs: 'ask-approval', use: 'preferred', allowedDomains: ['registry.npmjs.org'], denyRead: ['~/private'] },
        maxPriceInputPerM: 0.5,
        maxPriceOutputPerM: 2,
        minContext: 64000,
        concurrency: 8,
        jobTimeoutMinutes: 90,
        retentionDays: 7,
        inlineAnswerChars: 2000,
        delegateMaxRetries: 0,
        modelsCacheTtlMinutes: 15,
        claudePath: CLAUDE_CLI,
      };
      const saved = (await show(h.env)).settings;
      expect(saved).toEqual(expected);
      expect(JSON.parse(await readFile(h.settingsFile, 'utf8'))).toEqual(expected);
      // The flags' own tables, not this test's list: a setting that gets a flag and no menu entry stays at its default here.
      for (const { path } of [...SCALAR_SETTINGS, ...LIST_SETTINGS]) {
        expect(settingValue(saved, path), `${path} was not changed through the menu`).not.toEqual(settingValue(defaults, path));
      }
    });

    it('scrolls the menu on a short terminal, and comes back to the entry just edited', async () => {
      const t = terminal(h.env, 14);
      // Isolation is below the fold at first: the menu scrolls down to it.
      await t.answer('What would you like to change?', move('key', 'isolation') + ENTER);
      await t.answer('Isolation: worktree: a delegation', DOWN + ENTER);
      await t.answer('Fan-out limit: the most models', `4${ENTER}`);
      // Enter keeps each verify setting as it is.
      await t.answer('Verify command timeout in minutes', ENTER);
      await t.answer('Verify commands at once', ENTER);
      await t.answer('Fix rounds', ENTER);
      // The focus is on Isolation again, so three steps down is Review and save.
      await t.answer('Isolation: none, fan-out up to 4 (changed)', move('isolation', 'save') + ENTER);
      await t.waitFor('Isolation: worktree → none');
      await t.waitFor('Fan-out limit: 3 → 4');
      await t.answer('Save these changes?', ENTER);
      await t.waitFor('Saved');
      expect(await t.exited).toBe(0);
      expect((await show(h.env)).settings).toEqual({ ...defaults, isolation: 'none', fanOutLimit: 4 });
    });

    it('run in a repository with none saved, offers the verify commands its top folder suggests, and saves the ones picked as shown', async () => {
      const repo = path.join(h.home, 'app');
      await makeRepo(repo, { 'package.json': JSON.stringify({ scripts: { test: 'vitest run', lint: 'eslint .' } }) });
      await mkdir(path.join(repo, 'src'));
      const t = terminal(h.env, 80, path.join(repo, 'src'));
      await t.waitFor('What would you like to change?');
      await t.answer('Isolation: worktree, fan-out up to 3', move('key', 'isolation') + ENTER);
      await t.answer('Isolation: worktree: a delegation', ENTER);
      await t.answer('Fan-out limit: the most models', ENTER);
      await t.answer('Verify command timeout in minutes', ENTER);
      await t.answer('Verify commands at once', ENTER);
      await t.answer('Fix rounds', ENTER);
      await t.waitFor(`Save verify commands for ${repo}, run by a delegation there that names none?`);
      await t.waitFor('npm test');
      await t.answer('npm run lint', SPACE + ENTER); // the first, npm test, picked
      await t.answer('Isolation: worktree, fan-out up to 3, verify commands saved for 1 repository (changed)', move('isolation', 'save') + ENTER);
      await t.waitFor(`Saved verify commands: saved for ${repo}`);
      await t.answer('Save these changes?', ENTER);
      await t.waitFor('Saved');
      expect(await t.exited).toBe(0);
      expect((JSON.parse(await readFile(h.settingsFile, 'utf8')) as Settings).verifyCommands).toEqual([{ repo, commands: ['npm test'] }]);
    });

    it('shows the saved verify commands under Isolation, each repository with its list, and forgets the one picked', async () => {
      // Saved by `openrouter-delegate verify --save` in each repository (tests/e2e/verify-command.test.ts).
      const app = { repo: '/home/me/app', commands: ['npm test', 'npm run lint'] };
      const lib = { repo: '/home/me/lib', commands: ['cargo test'] };
      await mkdir(path.dirname(h.settingsFile), { recursive: true });
      await writeFile(h.settingsFile, JSON.stringify({ verifyCommands: [app, lib] }));
      const t = terminal(h.env);
      await t.waitFor('What would you like to change?');
      await t.answer('Isolation: worktree, fan-out up to 3, verify commands saved for 2 repositories', move('key', 'isolation') + ENTER);
      await t.answer('Isolation: worktree: a delegation', ENTER);
      await t.answer('Fan-out limit: the most models', ENTER);
      await t.answer('Verify command timeout in minutes', ENTER);
      await t.answer('Verify commands at once', ENTER);
      await t.answer('Fix rounds', ENTER);
      await t.waitFor('Saved verify commands, run by a delegation in that repository that names none');
      await t.waitFor('/home/me/app: npm test, npm run lint');
      await t.answer('/home/me/lib: cargo test', SPACE + ENTER); // the first, /home/me/app, picked
      await t.answer('Isolation: worktree, fan-out up to 3, verify commands saved for 1 repository (changed)', move('isolation', 'save') + ENTER);
      await t.waitFor('Saved verify commands: forgotten for /home/me/app');
      await t.answer('Save these changes?', ENTER);
      await t.waitFor('Saved');
      expect(await t.exited).toBe(0);
      expect((await show(h.env)).settings).toEqual({ ...defaults, verifyCommands: [lib] });
      expect((JSON.parse(await readFile(h.settingsFile, 'utf8')) as Settings).verifyCommands).toEqual([lib]);
    });
  });
});

/** A port that was free a moment ago: nothing listens there, so OpenRouter "cannot be reached" at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.each(ROUTES)('openrouter-mcp-config %s, with OpenRouter out of reach', (route) => {
  let h: Home;
  let port: number;
  beforeAll(async () => {
    port = await closedPort();
    h = await openHome(route, `http://127.0.0.1:${port}/api`);
  });
  afterAll(() => h.close());

  it('takes a model it cannot check, and says which check could not be made and why', async () => {
    const result = await config(['--default-model', 'deepseek/deepseek-v5'], h.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Default model: deepseek/deepseek-v4-flash-0731 → deepseek/deepseek-v5');
    expect(result.stderr).toBe(
      `Warning: deepseek/deepseek-v5 was not checked against OpenRouter's model list: Cannot reach OpenRouter at 127.0.0.1:${port} (connection refused). ` +
        'Check your network connection, and OPENROUTER_BASE_URL if you set it.\n',
    );
    expect(JSON.parse(await readFile(h.settingsFile, 'utf8'))).toEqual({ ...defaults, defaultModel: 'deepseek/deepseek-v5' });
  });
});

describe('openrouter-mcp-config', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()?.();
  });
  async function fileHome(): Promise<Home> {
    const h = await openHome('without a service');
    cleanups.push(() => h.close());
    return h;
  }

  it('treats unknown flags, missing values and repeated flags as usage errors (exit 2), changing nothing', async () => {
    const h = await fileHome();
    expect((await config(['--mode', 'auto'], h.env)).code).toBe(0);
    const before = await bytesOf(h.settingsFile);
    for (const [args, fragment] of [
      [['--colour'], "Unknown option '--colour'"],
      [['--mode'], "Option '--mode <value>' argument missing"],
      [['--mode', 'off', '--mode', 'auto'], '--mode is given twice'],
      [['stray'], 'Unexpected argument (not repeated here: it may be a key)'],
      [['--set-key', '--remove-key'], 'not both at once'],
    ] as const) {
      const result = await config([...args], h.env);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(fragment);
      expect(result.stderr).toContain('--help');
    }
    expect(await bytesOf(h.settingsFile)).toEqual(before);
  });

  it('--set-key without a key says how to give one and stores nothing', async () => {
    const h = await fileHome();
    const result = await config(['--set-key'], h.env, '');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('No key given');
    expect((await show(h.env)).secrets.apiKey.present).toBe(false);
  });

  it('without arguments and without a terminal prints the help and exits 2', async () => {
    const h = await fileHome();
    const result = await config([], h.env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Usage:');
    expect(result.stderr).toContain('--set-key');
    expect(await bytesOf(h.settingsFile)).toBeNull();
  });

  it('reports a settings file broken by hand and refuses changes without touching it', async () => {
    const h = await fileHome();
    await mkdir(path.dirname(h.settingsFile), { recursive: true });
    await writeFile(h.settingsFile, '{\n  "mode": "auto",\n}\n');
    const before = await bytesOf(h.settingsFile);
    const shown = await config(['--show'], h.env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`Settings problem: Settings file ${h.settingsFile}:3:1 is not valid JSON`);
    const change = await config(['--mode', 'off'], h.env);
    expect(change.code).toBe(1);
    expect(change.stderr).toContain('Fix or delete the file');
    expect(await bytesOf(h.settingsFile)).toEqual(before);
  });

  it('never starts a service', async () => {
    const h = await fileHome();
    expect((await config(['--mode', 'auto'], h.env)).code).toBe(0);
    expect((await config(['--show'], h.env)).stdout).toContain('Service:          not running');
    expect((await runCli(['status'], h.env)).code).toBe(3);
  });

  it('--help names a round-trip test for every settings flag it lists', async () => {
    const h = await fileHome();
    const help = (await config(['--help'], h.env)).stdout;
    const settingsSection = help.slice(help.indexOf('Settings:'), help.indexOf('Keys ('));
    const flags = [...settingsSection.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1] as string);
    expect(flags.length).toBeGreaterThan(15);
    const tested = Object.values(ROUND_TRIPS).flatMap((c) => c.calls.flat().filter((arg) => arg.startsWith('--')));
    for (const flag of flags) expect(tested, flag).toContain(flag);
  });
});
