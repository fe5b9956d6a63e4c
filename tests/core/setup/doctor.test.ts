import { describe, expect, it } from 'vitest';
import { APP_VERSION, ServiceError, defaultSettings } from '../../../src-main/contract/index.js';
import type { Balance, ServiceStatus, Settings } from '../../../src-main/contract/index.js';
import { resolveLocations } from '../../../src-main/platform/locations.js';
import type { RegistrationState, StdioCommand } from '../../../src-main/core/setup/claude-registration.js';
import { CHECK_IDS, judgeRuntimeFiles, judgeSandbox, judgeWorktrees, runDoctor } from '../../../src-main/core/setup/doctor.js';
import { renderDoctorLines } from '../../../src-main/core/setup/present.js';
import type { SandboxAvailability } from '../../../src-main/platform/sandbox-probe.js';
import type { CheckId, CheckResult, DoctorDeps, PathFacts, RuntimeFacts, ServiceLink } from '../../../src-main/core/setup/doctor.js';

const locations = resolveLocations({ OPENROUTER_DELEGATE_HOME: '/tmp/ord-doctor-home' });
const EXPECTED: StdioCommand = { command: '/usr/bin/node', args: ['/opt/ord/dist/bridge/openrouter-delegate-mcp.js'], env: {} };
const KEY_INFO = {
  label: 'sk-or-v1-abc...def',
  limitUsd: 1,
  remainingUsd: 0.82,
  usageUsd: 0.18,
  usageDailyUsd: 0,
  usageWeeklyUsd: 0,
  usageMonthlyUsd: 0,
  isFreeTier: false,
};
const MODELS = { data: [{ id: 'a' }, { id: 'b' }] };
const SANDBOX: SandboxAvailability = { available: true, via: 'bubblewrap and socat (/usr/bin/bwrap)' };
const NO_SANDBOX: SandboxAvailability = {
  available: false,
  reason: 'bubblewrap (bwrap) and socat are not installed',
  fix: 'install bubblewrap and socat (Debian, Ubuntu: sudo apt-get install bubblewrap socat)',
};

const dir = (mode = 0o700, uid = 1000): PathFacts => ({ kind: 'directory', mode, uid });
const file = (mode = 0o600, uid = 1000): PathFacts => ({ kind: 'file', mode, uid });
const socket = (mode = 0o600, uid = 1000): PathFacts => ({ kind: 'socket', mode, uid });

/** Everything healthy, no service running; each test breaks one thing. */
function deps(overrides: Partial<DoctorDeps> = {}): DoctorDeps {
  const registered: RegistrationState = {
    registered: true,
    configFile: '/h/.claude.json',
    server: { type: 'stdio', ...EXPECTED, url: null },
    matches: true,
    differences: [],
  };
  return {
    locations,
    env: {},
    locateClaude: async () => '/usr/local/bin/claude',
    claudeRunner: () => ({ label: 'claude', run: async () => ({ code: 0, stdout: '2.1.332 (Claude Code)\n', stderr: '' }) }),
    lookupRegistration: async () => registered,
    expectedBridge: EXPECTED,
    bridgeScriptExists: async () => true,
    connectService: async () => null,
    secrets: { get: () => ({ value: 'sk-or-v1-good', source: 'keychain' }), keychainStatus: () => ({ available: true, backend: 'Secret Service (D-Bus)' }) },
    openRouter: { listModels: async () => MODELS, getKeyInfo: async () => KEY_INFO },
    baseUrl: 'https://openrouter.ai/api',
    loadSettings: async () => ({ file: locations.settingsFile, exists: true, problem: undefined }),
    probeSandbox: async () => SANDBOX,
    inspectPath: async () => null,
    uid: 1000,
    platform: 'linux',
    now: (() => {
      let t = 0;
      return () => (t += 40);
    })(),
    ...overrides,
  };
}

function byId(checks: CheckResult[]): Record<CheckId, CheckResult> {
  return Object.fromEntries(checks.map((check) => [check.id, check])) as Record<CheckId, CheckResult>;
}

async function check(id: CheckId, overrides: Partial<DoctorDeps> = {}): Promise<CheckResult> {
  return byId((await runDoctor(deps(overrides))).checks)[id];
}

function fakeService(balance: Partial<Balance>, status: Partial<ServiceStatus> = {}): ServiceLink & { closed: boolean } {
  const link = {
    closed: false,
    call: (async (method: string) => {
      if (method === 'service.status') {
        return {
          version: APP_VERSION,
          protocol: 1,
          pid: 4242,
          host: 'headless',
          home: '/h',
          paths: {},
          startedAt: '',
          uptimeSeconds: 12,
          clients: 1,
          ...status,
        };
      }
      if (method === 'balance.get') return { keySource: 'keychain', key: null, credits: null, fetchedAt: null, ...balance };
      throw new Error(`unexpected ${method}`);
    }) as ServiceLink['call'],
    close: () => {
      link.closed = true;
    },
  };
  return link;
}

describe('doctor', () => {
  it('runs every check in order; a service that is not running is a warning, not a failure', async () => {
    const report = await runDoctor(deps());
    expect(report.checks.map((c) => c.id)).toEqual([...CHECK_IDS]);
    expect(report.ok).toBe(true);
    const statuses = Object.fromEntries(report.checks.map((c) => [c.id, c.status]));
    expect(statuses).toEqual({
      claude: 'ok',
      registration: 'ok',
      commands: 'ok',
      service: 'warn',
      runtime: 'ok',
      settings: 'ok',
      sandbox: 'ok',
      keychain: 'ok',
      key: 'ok',
      openrouter: 'ok',
      worktrees: 'ok',
      verify: 'ok',
    });
    expect(byId(report.checks).service.fix).toContain('the bridge starts it');
  });

  it('reports the claude version and where it is', async () => {
    expect((await check('claude')).summary).toBe('version 2.1.332 at /usr/local/bin/claude.');
  });

  it('fails when claude is missing, with how to install it', async () => {
    const missing = new ServiceError(
      'claude_missing',
      "Claude Code's `claude` command was not found on the PATH. Install Claude Code with `npm install -g @anthropic-ai/claude-code`.",
    );
    const result = await check('claude', { locateClaude: () => Promise.reject(missing) });
    expect(result.status).toBe('fail');
    expect(result.summary).toContain('npm install -g @anthropic-ai/claude-code');
  });

  it('fails when claude does not answer --version', async () => {
    const result = await check('claude', {
      claudeRunner: () => ({ label: 'claude', run: async () => ({ code: 127, stdout: '', stderr: 'cannot execute binary file' }) }),
    });
    expect(result).toMatchObject({ status: 'fail', summary: expect.stringContaining('exit 127): cannot execute binary file') as unknown });
    expect(result.fix).toContain('npm install -g @anthropic-ai/claude-code');
  });

  it('fails when the bridge is not registered, and says to install it', async () => {
    const result = await check('registration', { lookupRegistration: async () => ({ registered: false, configFile: '/h/.claude.json' }) });
    expect(result).toMatchObject({ status: 'fail', fix: 'Run `openrouter-delegate install`.' });
    expect(result.summary).toContain('/h/.claude.json');
  });

  it('warns when another command is registered under the name, saying what differs', async () => {
    const state: RegistrationState = {
      registered: true,
      configFile: '/h/.claude.json',
      server: { type: 'stdio', command: 'openrouter-delegate-mcp', args: [], env: {}, url: null },
      matches: false,
      differences: ['command `openrouter-delegate-mcp` instead of `/usr/bin/node /opt/ord/dist/bridge/openrouter-delegate-mcp.js`'],
    };
    const result = await check('registration', { lookupRegistration: async () => state });
    expect(result.status).toBe('warn');
    expect(result.summary).toContain('command `openrouter-delegate-mcp` instead of');
    expect(result.fix).toContain('openrouter-delegate install');
  });

  it('fails when the bridge script is missing, before looking at the registration', async () => {
    const result = await check('registration', { bridgeScriptExists: async () => false });
    expect(result).toMatchObject({ status: 'fail', summary: expect.stringContaining('/opt/ord/dist/bridge/openrouter-delegate-mcp.js is missing') as unknown });
    expect(result.fix).toContain('npm run build');
  });

  it('asks a running service for its status and checks the key through it, then closes the connection', async () => {
    const service = fakeService({ key: KEY_INFO });
    const report = await runDoctor(
      deps({
        connectService: async () => service,
        inspectPath: async (p) => (p === locations.runtime ? dir() : p === locations.tokenFile ? file() : socket()),
      }),
    );
    const checks = byId(report.checks);
    expect(checks.service).toMatchObject({ status: 'ok', summary: expect.stringContaining('pid 4242') as unknown });
    expect(checks.key).toMatchObject({ status: 'ok', summary: expect.stringContaining("the service's") as unknown });
    expect(checks.key.summary).toContain('$0.82 of its $1.00 limit left');
    expect(checks.runtime.summary).toContain('token 0600, socket 0600');
    expect(service.closed).toBe(true);
  });

  it('warns when the running service is another version', async () => {
    const result = await check('service', { connectService: async () => fakeService({ key: KEY_INFO }, { version: '0.0.9' }) });
    expect(result.status).toBe('warn');
    expect(result.fix).toContain('openrouter-delegate stop');
  });

  it('fails when the service answers but refuses us', async () => {
    const result = await check('service', { connectService: () => Promise.reject(new ServiceError('unauthorized', 'The service refused the token.')) });
    expect(result).toMatchObject({ status: 'fail', summary: 'The service refused the token.' });
  });

  it('warns when the key has no limit of its own, saying how to give it one or let the service make a limited key', async () => {
    const result = await check('key', {
      openRouter: { listModels: async () => MODELS, getKeyInfo: async () => ({ ...KEY_INFO, limitUsd: null, remainingUsd: null }) },
    });
    expect(result.status).toBe('warn');
    expect(result.summary).toContain('no spending limit of its own');
    expect(result.fix).toContain('https://openrouter.ai/settings/keys');
    expect(result.fix).toContain('`openrouter-delegate key delegate-on`');
  });

  it("warns when the key's limit is more than twice the day budget, and names when it resets", async () => {
    const monthly = { ...KEY_INFO, limitUsd: 50, remainingUsd: 40, limitReset: 'monthly' as const };
    const result = await check('key', {
      openRouter: { listModels: async () => MODELS, getKeyInfo: async () => monthly },
      loadSettings: async () => ({ file: locations.settingsFile, exists: true, problem: undefined, perDayUsd: 20 }),
    });
    expect(result.status).toBe('warn');
    expect(result.summary).toContain('resets on the 1st at midnight UTC');
    expect(result.summary).toContain('more than 2× your day budget of $20.00');
  });

  it('is content with a daily limit near the day budget, and says it resets daily', async () => {
    const daily = { ...KEY_INFO, limitUsd: 5, remainingUsd: 4, limitReset: 'daily' as const };
    const result = await check('key', { connectService: async () => fakeService({ key: daily, keySource: 'keychain' }) });
    expect(result.status).toBe('ok');
    expect(result.summary).toContain('$4.00 of its $5.00 limit left, resets daily at midnight UTC');
  });

  it("fails, saying why, when the delegates' own key is on but unusable (they are refused)", async () => {
    const delegateKey = {
      mode: 'own' as const,
      hash: null,
      limitUsd: null,
      limitReset: null,
      createdAt: null,
      problem: 'The delegate key could not be made or changed: refused (403).',
    };
    const result = await check('key', { connectService: async () => fakeService({ key: KEY_INFO, keySource: 'keychain' }, { delegateKey }) });
    expect(result.status).toBe('fail');
    expect(result.summary).toContain('Delegates are refused: The delegate key could not be made or changed: refused (403).');
  });

  it("says the delegates use the key the service made, and its daily cap, instead of warning about the user's key", async () => {
    const delegateKey = { mode: 'own' as const, hash: 'abc', limitUsd: 5, limitReset: 'daily' as const, createdAt: '2026-08-20T12:00:00.000Z' };
    const unlimited = { ...KEY_INFO, limitUsd: null, remainingUsd: null };
    const result = await check('key', { connectService: async () => fakeService({ key: unlimited, keySource: 'keychain' }, { delegateKey }) });
    expect(result.status).toBe('ok');
    expect(result.summary).toContain('Delegates use a key the service made, limited by OpenRouter to $5.00 a day.');
  });

  it('fails when there is no key, saying how to add one', async () => {
    const result = await check('key', { secrets: { get: () => null, keychainStatus: () => ({ available: true, backend: 'K' }) } });
    expect(result.status).toBe('fail');
    expect(result.fix).toContain('openrouter-delegate key set');
  });

  it('fails when OpenRouter refuses the key, with its message', async () => {
    const refused = new ServiceError(
      'openrouter_unauthorized',
      'OpenRouter rejected the key (401). Check it at https://openrouter.ai/settings/keys, then set it again with `openrouter-delegate key set`.',
    );
    const result = await check('key', { openRouter: { listModels: async () => MODELS, getKeyInfo: () => Promise.reject(refused) } });
    expect(result.status).toBe('fail');
    expect(result.summary).toBe(`from the OS keychain, but ${refused.message}`);
  });

  it('only warns about the key when OpenRouter cannot be asked', async () => {
    const down = new ServiceError('openrouter_unreachable', 'Cannot reach OpenRouter at 127.0.0.1:9 (connection refused).');
    const report = await runDoctor(deps({ openRouter: { listModels: () => Promise.reject(down), getKeyInfo: () => Promise.reject(down) } }));
    const checks = byId(report.checks);
    expect(checks.key.status).toBe('warn');
    expect(checks.openrouter).toMatchObject({ status: 'fail', summary: `${down.message} (after 40 ms)`, durationMs: 40 });
    expect(report.ok).toBe(false);
  });

  it('reports the models round trip with its duration', async () => {
    expect(await check('openrouter')).toMatchObject({ status: 'ok', summary: 'GET /v1/models at openrouter.ai: 2 models in 40 ms.', durationMs: 40 });
  });

  it('treats a keychain that is unavailable as a failure, unless OPENROUTER_API_KEY supplies the key', async () => {
    const secrets = {
      get: () => ({ value: 'sk-or-v1-env', source: 'environment' as const }),
      keychainStatus: () => ({ available: false, backend: 'Secret Service (D-Bus)', problem: 'No Secret Service.' }),
    };
    expect(await check('keychain', { secrets })).toMatchObject({ status: 'fail', summary: 'Secret Service (D-Bus) is unavailable: No Secret Service.' });
    expect((await check('keychain', { secrets, env: { OPENROUTER_API_KEY: 'sk-or-v1-env' } })).status).toBe('warn');
  });

  it('fails on a broken settings file, with the store’s own explanation', async () => {
    const problem =
      'Settings file /h/settings.json:3:5 is not valid JSON: Unexpected token. Fix or delete the file; until then the last good settings stay in force.';
    expect(await check('settings', { loadSettings: async () => ({ file: '/h/settings.json', exists: true, problem }) })).toMatchObject({
      status: 'fail',
      summary: problem,
    });
  });

  it('turns a check that throws into a failed check, and still runs the others', async () => {
    const report = await runDoctor(deps({ loadSettings: () => Promise.reject(new TypeError('boom')) }));
    expect(byId(report.checks).settings).toMatchObject({ status: 'fail', summary: 'the check itself failed: boom' });
    expect(report.checks.filter((c) => c.status === 'fail')).toHaveLength(1);
  });
});

describe("the sandbox for delegates' programs", () => {
  /** The settings file with these sandbox settings (the rest default). */
  function withSandbox(sandbox: Partial<Settings['sandbox']>, availability: SandboxAvailability): Partial<DoctorDeps> {
    return {
      loadSettings: async () => ({ file: locations.settingsFile, exists: true, problem: undefined, sandbox: { ...defaultSettings().sandbox, ...sandbox } }),
      probeSandbox: async () => availability,
    };
  }

  it('is in order when the sandbox runs here, naming what runs it', async () => {
    const result = await check('sandbox', withSandbox({}, SANDBOX));
    expect(result).toMatchObject({
      title: "Sandbox for delegates' programs",
      status: 'ok',
      summary: 'runs each delegate whole in a box of its own (its Claude Code, file tools and programs): bubblewrap and socat (/usr/bin/bwrap).',
    });
    expect(result.fix).toBeUndefined();
  });

  it('fails when it is missing and the settings require it, with the probe’s fix; the report is then not ok', async () => {
    const report = await runDoctor(deps(withSandbox({ programs: 'sandboxed', use: 'required' }, NO_SANDBOX)));
    const result = byId(report.checks).sandbox;
    expect(result).toEqual({
      id: 'sandbox',
      title: "Sandbox for delegates' programs",
      status: 'fail',
      summary:
        'not available: bubblewrap (bwrap) and socat are not installed. The settings require it, so a delegation whose delegate could run programs is refused.',
      fix: 'Install bubblewrap and socat (Debian, Ubuntu: sudo apt-get install bubblewrap socat).',
    });
    expect(report.ok).toBe(false);
    expect(renderDoctorLines(report)).toContain(
      "✗ Sandbox for delegates' programs: not available: bubblewrap (bwrap) and socat are not installed. The settings require it, so a delegation whose delegate could run programs is refused. → Install bubblewrap and socat (Debian, Ubuntu: sudo apt-get install bubblewrap socat).",
    );
  });

  it('fails with the defaults too: programs sandboxed, the sandbox required', async () => {
    expect((await check('sandbox', { probeSandbox: async () => NO_SANDBOX })).status).toBe('fail');
    // A settings file that cannot be read leaves the defaults in force.
    expect((await check('sandbox', { probeSandbox: async () => NO_SANDBOX, loadSettings: () => Promise.reject(new Error('gone')) })).status).toBe('fail');
  });

  it('only warns when it is missing and merely preferred: programs run unsandboxed, only when pre-approved', async () => {
    const result = await check('sandbox', withSandbox({ programs: 'ask-approval', use: 'preferred' }, NO_SANDBOX));
    expect(result.status).toBe('warn');
    expect(result.summary).toBe(
      'not available: bubblewrap (bwrap) and socat are not installed. Programs run unsandboxed, only when a delegation pre-approves them, and the job says so.',
    );
    expect(result.fix).toBe('Install bubblewrap and socat (Debian, Ubuntu: sudo apt-get install bubblewrap socat).');
  });

  it('warns when the settings turn the sandbox off: pre-approved programs run as you, whether or not it is available', async () => {
    for (const availability of [SANDBOX, NO_SANDBOX]) {
      const result = await check('sandbox', withSandbox({ programs: 'ask-approval', use: 'off' }, availability));
      expect(result.status).toBe('warn');
      expect(result.summary).toMatch(/^the sandbox is off in the settings: programs a delegation pre-approves run unsandboxed, as you/);
      expect(result.fix).toMatch(/openrouter-mcp-config --sandbox required/);
    }
  });

  it('is in order when programs are off, whatever the sandbox', async () => {
    for (const use of ['required', 'preferred', 'off'] as const) {
      const result = await check('sandbox', withSandbox({ programs: 'off', use }, NO_SANDBOX));
      expect(result.status, use).toBe('ok');
      expect(result.summary).toBe(
        'programs are off in the settings: delegates run none (the sandbox: not available: bubblewrap (bwrap) and socat are not installed).',
      );
    }
  });

  it('turns a probe that throws into a failed check', async () => {
    expect(await check('sandbox', { probeSandbox: () => Promise.reject(new Error('spawn EACCES')) })).toMatchObject({
      status: 'fail',
      summary: 'the check itself failed: spawn EACCES',
    });
  });

  it('is judged by a pure function of the settings and the probe', () => {
    expect(judgeSandbox({ programs: 'sandboxed', use: 'preferred' }, SANDBOX).status).toBe('ok');
    expect(judgeSandbox({ programs: 'sandboxed', use: 'required' }, NO_SANDBOX).status).toBe('fail');
  });
});

describe('the socket folder and the token', () => {
  const base: RuntimeFacts = {
    runtime: '/run/ord',
    tokenFile: '/run/ord/token',
    socketPath: '/run/ord/service.sock',
    dir: dir(),
    token: file(),
    socket: socket(),
    uid: 1000,
    serviceRunning: true,
  };

  it('are fine when private and ours', () => {
    expect(judgeRuntimeFiles(base)).toEqual({ status: 'ok', summary: '/run/ord 0700, token 0600, socket 0600, all yours.' });
  });

  it('may not exist yet while no service runs', () => {
    expect(judgeRuntimeFiles({ ...base, dir: null, token: null, socket: null, serviceRunning: false }).status).toBe('ok');
    expect(judgeRuntimeFiles({ ...base, dir: null, token: null, socket: null, serviceRunning: true }).status).toBe('fail');
  });

  it('fail with the chmod to run when the folder is open to others', () => {
    expect(judgeRuntimeFiles({ ...base, dir: dir(0o755) })).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('mode 0755') as unknown,
      fix: 'Run `chmod 700 /run/ord`.',
    });
  });

  it('fail with the chmod to run when the token is readable by others', () => {
    expect(judgeRuntimeFiles({ ...base, token: file(0o644) })).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('chmod 600 /run/ord/token') as unknown,
    });
  });

  it('fail when the folder is a link or someone else’s', () => {
    expect(judgeRuntimeFiles({ ...base, dir: { kind: 'symlink', mode: 0o777, uid: 1000 } }).summary).toContain('symbolic link');
    expect(judgeRuntimeFiles({ ...base, dir: dir(0o700, 0) })).toMatchObject({ status: 'fail', summary: '/run/ord belongs to uid 0, not to you (uid 1000).' });
    expect(judgeRuntimeFiles({ ...base, socket: socket(0o600, 0) }).status).toBe('fail');
  });
});

describe('kept worktrees', () => {
  it('says how many worktrees are kept and their size, and warns above 5 GB with the command that cleans up', async () => {
    expect(judgeWorktrees({ count: 0, bytes: 0, complete: true })).toEqual({ status: 'ok', summary: 'none kept.' });
    expect(judgeWorktrees({ count: 3, bytes: 1_200_000_000, complete: true })).toEqual({ status: 'ok', summary: '3 kept, 1.2 GB.' });
    const big = judgeWorktrees({ count: 52, bytes: 218e9, complete: false });
    expect(big).toMatchObject({ status: 'warn', summary: '52 kept, at least 218 GB. More than 5 GB.' });
    expect(big.fix).toContain('openrouter-delegate worktrees --remove-taken');
    const report = await runDoctor(deps({ measureWorktrees: async () => ({ count: 2, bytes: 6e9, complete: true }) }));
    expect(byId(report.checks).worktrees).toMatchObject({ status: 'warn', title: 'Kept worktrees' });
    expect(report.ok).toBe(true);
  });
});
