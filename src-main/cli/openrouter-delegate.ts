/**
 * `openrouter-delegate`: run, stop and inspect the service; manage the OpenRouter key; connect Claude
 * Code and check the whole set-up. Every command says what to do next when something is missing.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { APP_VERSION, ServiceError, isActive } from '../contract/index.js';
import type { SecretKind, SecretsStatus } from '../contract/index.js';
import { IpcClient } from '../ipc/client.js';
import { resolveLocations } from '../platform/locations.js';
import type { Locations } from '../platform/locations.js';
import { AlreadyRunningError } from '../ipc/server.js';
import { OpenRouterClient } from '../core/openrouter/client.js';
import { SecretStore } from '../core/secrets/secret-store.js';
import { removeSecret, storeSecret } from '../core/service/secret-ops.js';
import { ATTRIBUTION, baseUrlFrom } from '../core/openrouter/endpoint.js';
import { ServiceHost } from '../host/service-host.js';
import { createSetupContext } from '../core/setup/context.js';
import type { SetupContext } from '../core/setup/context.js';
import { runDoctor } from '../core/setup/doctor.js';
import { describeInstall, describeUninstall, renderDoctorLines } from '../core/setup/present.js';
import { settingsPageOpenFile } from '../host/settings-page.js';
import { openInBrowser } from './open-browser.js';
import { chooseStartHost, launchTrayApp } from './desktop-launch.js';
import { runKeeper } from '../host/keeper.js';
import { readSecret } from './read-secret.js';
import { worktreesCommand } from './worktrees-command.js';
import { takeCommand } from './take-command.js';
import type { TakeWay } from '../contract/index.js';
import { startHeadlessService } from '../platform/headless-service.js';
import { bridgeSetupFor } from '../platform/tray-app.js';
import type { BridgeSetup } from '../platform/tray-app.js';

const USAGE = `openrouter-delegate ${APP_VERSION}

Usage:
  openrouter-delegate serve [--ui [--ui-port N]]
                                        run the service in the foreground (Ctrl-C stops it; jobs keep running);
                                        --ui also serves the settings page on 127.0.0.1 and prints its URL
                                        (with a private token: treat it like a password)
  openrouter-delegate ui [--print]      open the running service's settings page in the browser (starting the
                                        service if none runs); --print, or without a display, prints its URL
  openrouter-delegate start             what \`npm start\` runs: the tray app where it is installed and a display
                                        exists (it takes over; the command returns), else the headless service
                                        in the foreground, saying why
  openrouter-delegate stop [--kill-jobs]
                                        stop the running service (delegated jobs keep running unless --kill-jobs,
                                        and wait, retrying, for a service to be started again)
  openrouter-delegate status [--json]   is it running, where its files are, which key is in use
  openrouter-delegate key set [--management] [--no-validate]
                                        store the OpenRouter key (read from stdin) in the OS keychain
  openrouter-delegate key remove [--management]
  openrouter-delegate key status [--json]
  openrouter-delegate install           register the MCP bridge with Claude Code (user scope, as "openrouter")
  openrouter-delegate uninstall         remove that registration
  openrouter-delegate doctor [--json]   check claude, the registration, the service, the key, OpenRouter …
                                        (exit 1 when a check fails)
  openrouter-delegate discard <job-id> [--yes]
                                        throw away a delegated job's work: remove its worktree and delete its
                                        branch (every turn of its conversation); asks first unless --yes
  openrouter-delegate take <job-id> [--merge|--squash|--rebase] [--dry-run] [--json]
                                        take a finished job's branch into your repository's current branch, only
                                        when it can be done cleanly (else it says why and changes nothing): merge
                                        (the default; a fast-forward when possible), squash (one commit of yours)
                                        or rebase (its commits replayed onto your branch); --dry-run (or
                                        --preview) says what each way would do; exit 1 when refused
  openrouter-delegate worktrees [--remove-taken] [--json]
                                        the kept worktrees: job, branch, taken/untaken/orphan, disk, total;
                                        --remove-taken removes those whose work is in another branch (merged,
                                        squashed, cherry-picked, rebased) or discarded, never other work

The MCP bridge Claude Code starts is \`openrouter-delegate-mcp\`; \`install\` registers it with absolute paths.
Exit codes: 0 done, 1 failed, 2 bad usage, 3 (status) the service is not running.
`;

class UsageError extends Error {}

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}
function err(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function connect(locations: Locations): Promise<IpcClient | null> {
  try {
    return await IpcClient.connect({ locations, clientName: `cli/${APP_VERSION}` });
  } catch (error) {
    if (error instanceof ServiceError && error.code === 'unavailable') return null;
    throw error;
  }
}

interface ServeOptions {
  notifyReady: boolean;
  /** Serve the settings page on loopback (`--ui`), on this port (0: the last one if free, else any). */
  ui: { port: number } | null;
}

/** The built settings page beside this bundled CLI: dist/cli → dist/renderer. */
function pageDir(): string {
  return path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'renderer');
}

async function serve(locations: Locations, options: ServeOptions): Promise<number> {
  const { notifyReady } = options;
  const service = new ServiceHost({
    locations,
    env: process.env,
    host: 'headless',
    setup: bridgeSetup(),
    keeper: { command: process.execPath, args: [fileURLToPath(import.meta.url), 'keeper'] },
    // Every headless service can serve the page when asked (`openrouter-delegate ui`); `--ui` asks at once.
    settingsPage: { pageDir: pageDir(), port: options.ui?.port ?? 0 },
  });
  try {
    await service.start();
  } catch (error) {
    if (error instanceof AlreadyRunningError) {
      // A second start hands over to the first: not an error.
      if (notifyReady) out('already-running');
      err(error.message);
      if (options.ui) err('For its settings page, run `openrouter-delegate ui` (it opens the page, or prints its URL without a display).');
      return 0;
    }
    throw error;
  }
  if (options.ui) {
    try {
      const { url } = await service.caller(`cli/${APP_VERSION}`)('settingsPage.open', {});
      // stdout only: the URL holds the token, and stderr is what ends up in log files.
      out(`Settings page: ${url}`);
    } catch (error) {
      await service.stop();
      throw error;
    }
  }
  const stopped = new Promise<void>((resolve) => service.onStopped(resolve));
  const onSignal = (signal: NodeJS.Signals) => {
    err(`${signal}: stopping the service (delegated jobs keep running).`);
    void service.stop();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // Only now: whoever waits for "ready" may signal us at once.
  if (notifyReady) out('ready');
  await stopped;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  err('Service stopped.');
  return 0;
}

async function start(locations: Locations): Promise<number> {
  const running = await connect(locations);
  if (running) {
    try {
      const { host, pid } = await running.call('service.status', {});
      out(`The service is already running (${host}, pid ${pid}). \`openrouter-delegate stop\` stops it.`);
      return 0;
    } finally {
      running.close();
    }
  }
  const choice = chooseStartHost(process.env);
  if (choice.host === 'electron') {
    const result = await launchTrayApp({ choice, locations, env: process.env, clientName: `cli/${APP_VERSION}`, say: err });
    if (result.started) {
      out(`The tray app is running (service pid ${result.pid}) and takes over from here; quit it from its tray menu.`);
      return 0;
    }
    err(`${result.why}.`);
  } else {
    err(`Not starting the tray app: ${choice.reason}.`);
  }
  err('Starting the headless service instead. Ctrl-C stops it.');
  err('For the settings page in a browser, run `openrouter-delegate ui` in another terminal.');
  return serve(locations, { notifyReady: false, ui: null });
}

async function stop(locations: Locations, killJobs: boolean): Promise<number> {
  const client = await connect(locations);
  if (!client) {
    out('The service is not running.');
    return 0;
  }
  const closed = new Promise<void>((resolve) => client.onClose(resolve));
  const { killedJobs } = await client.call('service.stop', { killJobs });
  await closed;
  out(
    killJobs
      ? `Service stopped; ${killedJobs} delegated job${killedJobs === 1 ? '' : 's'} killed.`
      : 'Service stopped. Delegated jobs, if any, keep running and wait, retrying, for the next start, which picks them up; without one they fail once their retries run out (`stop --kill-jobs` ends them).',
  );
  return 0;
}

function describeSecrets(s: SecretsStatus): string[] {
  const source = (x: SecretsStatus['apiKey']) =>
    x.source === 'environment' ? 'from OPENROUTER_API_KEY' : x.source === 'keychain' ? 'in the OS keychain' : 'not set';
  const lines = [
    `OpenRouter key:   ${source(s.apiKey)}`,
    `Management key:   ${source(s.managementKey)}`,
    `Keychain:         ${s.keychain.backend}${s.keychain.available ? '' : ` — unavailable: ${s.keychain.problem ?? 'unknown reason'}`}`,
  ];
  if (!s.apiKey.present) lines.push('Add a key: `openrouter-delegate key set` (paste it, then Enter).');
  return lines;
}

async function status(locations: Locations, json: boolean): Promise<number> {
  const client = await connect(locations);
  if (!client) {
    const secrets = new SecretStore({ service: locations.keychainService, env: process.env }).status();
    if (json) out(JSON.stringify({ running: false, secrets }, null, 2));
    else {
      out('The service is not running. Start it with `openrouter-delegate serve` (the MCP bridge also starts it on demand).');
      for (const line of describeSecrets(secrets)) out(line);
    }
    return 3;
  }
  try {
    const [service, secrets] = await Promise.all([client.call('service.status', {}), client.call('secrets.status', {})]);
    if (json) {
      out(JSON.stringify({ running: true, service, secrets }, null, 2));
      return 0;
    }
    out(
      `Service:          running (${service.host}, pid ${service.pid}, version ${service.version}, up ${service.uptimeSeconds}s, ${service.clients} client(s))`,
    );
    out(`Home:             ${service.home}`);
    out(`Settings:         ${service.paths.settingsFile}`);
    out(`Data:             ${service.paths.data}`);
    out(`Socket dir:       ${service.paths.runtime}`);
    if (service.settingsProblem) out(`Settings problem: ${service.settingsProblem}`);
    for (const line of describeSecrets(secrets)) out(line);
    return 0;
  } finally {
    client.close();
  }
}

async function key(locations: Locations, action: string | undefined, kind: SecretKind, flags: { validate: boolean; json: boolean }): Promise<number> {
  const client = await connect(locations);
  const direct = () => ({
    secrets: new SecretStore({ service: locations.keychainService, env: process.env }),
    client: new OpenRouterClient({ baseUrl: baseUrlFrom(process.env), appTitle: ATTRIBUTION.title, appUrl: ATTRIBUTION.url }),
  });
  try {
    let result: SecretsStatus;
    switch (action) {
      case 'set': {
        const value = await readSecret(kind === 'api' ? 'OpenRouter key (input hidden): ' : 'Management key (input hidden): ');
        if (!value) throw new UsageError('No key given. Pipe it in (`printf %s "$KEY" | openrouter-delegate key set`) or type it when asked.');
        result = client
          ? await client.call('secrets.set', { kind, value, validate: flags.validate })
          : await storeSecret(direct(), kind, value, flags.validate);
        err(kind === 'api' ? 'Key stored in the OS keychain.' : 'Management key stored in the OS keychain.');
        if (kind === 'api' && result.apiKey.source === 'environment')
          err('Note: OPENROUTER_API_KEY is set in the environment and takes precedence over the keychain.');
        break;
      }
      case 'remove':
        result = client ? await client.call('secrets.remove', { kind }) : removeSecret(direct(), kind);
        err('Removed from the OS keychain.');
        break;
      case 'status':
        result = client ? await client.call('secrets.status', {}) : direct().secrets.status();
        break;
      default:
        throw new UsageError(`Unknown key action "${action ?? ''}": use set, remove or status.`);
    }
    if (flags.json) out(JSON.stringify(result, null, 2));
    else if (action === 'status') for (const line of describeSecrets(result)) out(line);
    return 0;
  } finally {
    client?.close();
  }
}

/**
 * The bridge this installation registers: this Node with the built bridge beside this bundled CLI
 * (dist/cli → dist/bridge), or, in the packaged app, its launcher, as the tray app's Connect does.
 */
function bridgeSetup(): BridgeSetup {
  return bridgeSetupFor({ bundleDir: path.dirname(fileURLToPath(import.meta.url)), platform: process.platform, nodePath: process.execPath });
}

function setupContext(locations: Locations): Promise<SetupContext> {
  return createSetupContext({ env: process.env, locations, ...bridgeSetup(), connectService: () => connect(locations) });
}

async function install(locations: Locations): Promise<number> {
  const registration = await (await setupContext(locations)).registration();
  for (const line of describeInstall(await registration.install())) out(line);
  return 0;
}

async function uninstall(locations: Locations): Promise<number> {
  const registration = await (await setupContext(locations)).registration();
  for (const line of describeUninstall(await registration.uninstall())) out(line);
  return 0;
}

async function doctor(locations: Locations, json: boolean): Promise<number> {
  const report = await runDoctor((await setupContext(locations)).doctorDeps());
  if (json) out(JSON.stringify(report, null, 2));
  else for (const line of renderDoctorLines(report)) out(line);
  return report.ok ? 0 : 1;
}

/** The running service, or one started headless for the call (as the bridge does). */
async function connectOrStart(locations: Locations): Promise<IpcClient> {
  const running = await connect(locations);
  if (running) return running;
  await startHeadlessService({ command: process.execPath, args: [fileURLToPath(import.meta.url), 'serve', '--notify-ready'], env: process.env, locations });
  const started = await connect(locations);
  if (!started) throw new ServiceError('unavailable', 'The service was started but does not answer; see the service log.');
  return started;
}

/**
 * The running service's settings page (a service started for it when none runs): opened in the browser, or its URL
 * printed when asked to or when there is no display. The URL goes to stdout only: it holds the page's token.
 */
async function ui(locations: Locations, print: boolean): Promise<number> {
  const client = await connectOrStart(locations);
  let url: string;
  try {
    ({ url } = await client.call('settingsPage.open', {}));
  } finally {
    client.close();
  }
  out(`Settings page: ${url}`);
  if (print) return 0;
  const opened = await openInBrowser({ url, file: settingsPageOpenFile(locations), platform: process.platform, env: process.env });
  if (opened.opened) err('Opened in your browser. The URL holds a private token: treat it like a password.');
  else err(`Not opening a browser: ${opened.why}. Open the URL above in a browser on this machine (an SSH tunnel to its port works too).`);
  return 0;
}

async function askYes(question: string): Promise<boolean> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await prompt.question(question)).trim());
  } finally {
    prompt.close();
  }
}

async function discard(locations: Locations, jobId: string | undefined, yes: boolean): Promise<number> {
  if (!jobId) throw new UsageError('Name the job whose work to discard: `openrouter-delegate discard <job-id>` (the job list shows the ids).');
  if (!yes && !process.stdin.isTTY) throw new UsageError('Not asking without a terminal: add --yes to discard without confirmation.');
  const client = await connectOrStart(locations);
  try {
    const { job, changes } = await client.call('jobs.result', { jobId, maxChars: 100 });
    const isolation = job.isolation;
    // A job that ran in place, or one still active, gets the service's refusal without a question first.
    if (!yes && isolation?.mode === 'worktree' && !isActive(job.state)) {
      const what = changes
        ? `${changes.totalFiles} file${changes.totalFiles === 1 ? '' : 's'} changed, +${changes.added} −${changes.removed}`
        : 'no branch left';
      const sure = await askYes(
        `Discard the work of ${job.id}: remove its worktree ${isolation.worktree ?? ''} and delete branch ${isolation.branch ?? ''} in ${isolation.repo ?? ''} (${what})? [y/N] `,
      );
      if (!sure) {
        out('Nothing was discarded.');
        return 1;
      }
    }
    const done = await client.call('jobs.discard', { jobId });
    out(
      [
        done.removedWorktree ? `Removed the worktree ${done.worktree}.` : `The worktree ${done.worktree} was already gone.`,
        done.deletedBranch ? `Deleted branch ${done.branch} in ${done.repo}.` : `Branch ${done.branch} was already gone.`,
        done.deletedBranch && done.lastCommit
          ? `Its last commit was ${done.lastCommit}: \`git branch ${done.branch} ${done.lastCommit}\` in ${done.repo} brings it back until git collects it.`
          : '',
      ]
        .filter(Boolean)
        .join(' '),
    );
    return 0;
  } finally {
    client.close();
  }
}

async function take(locations: Locations, jobId: string | undefined, ways: Record<TakeWay, boolean>, options: { preview: boolean; json: boolean }) {
  if (!jobId) throw new UsageError('Name the job whose work to take: `openrouter-delegate take <job-id>` (the job list shows the ids).');
  const asked = (Object.keys(ways) as TakeWay[]).filter((how) => ways[how]);
  if (asked.length > 1) throw new UsageError(`Take one way at a time: --${asked.join(' or --')}.`);
  const client = await connectOrStart(locations);
  try {
    return await takeCommand(client, jobId, { how: asked[0] ?? null, ...options }, out, err);
  } finally {
    client.close();
  }
}

async function worktrees(locations: Locations, options: { removeTaken: boolean; json: boolean }): Promise<number> {
  const client = await connectOrStart(locations);
  try {
    return await worktreesCommand(client, options, out);
  } finally {
    client.close();
  }
}

function parsePort(text: string | undefined): number {
  if (text === undefined) return 0;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port < 1 || port > 65535) throw new UsageError(`--ui-port takes a port number from 1 to 65535, not "${text}".`);
  return port;
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      json: { type: 'boolean', default: false },
      management: { type: 'boolean', default: false },
      'no-validate': { type: 'boolean', default: false },
      'notify-ready': { type: 'boolean', default: false },
      'kill-jobs': { type: 'boolean', default: false },
      yes: { type: 'boolean', short: 'y', default: false },
      ui: { type: 'boolean', default: false },
      'ui-port': { type: 'string' },
      print: { type: 'boolean', default: false },
      'remove-taken': { type: 'boolean', default: false },
      merge: { type: 'boolean', default: false },
      squash: { type: 'boolean', default: false },
      rebase: { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      preview: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      version: { type: 'boolean', short: 'v', default: false },
    },
  });
  if (values.version) {
    out(APP_VERSION);
    return 0;
  }
  const [command, action] = positionals;
  if (values.help || command === undefined || command === 'help') {
    out(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  const locations = resolveLocations(process.env);
  switch (command) {
    case 'serve':
      return serve(locations, { notifyReady: values['notify-ready'], ui: values.ui ? { port: parsePort(values['ui-port']) } : null });
    case 'ui':
      return ui(locations, values.print);
    case 'start':
      return start(locations);
    case 'stop':
      return stop(locations, values['kill-jobs']);
    case 'status':
      return status(locations, values.json);
    case 'install':
      return install(locations);
    case 'uninstall':
      return uninstall(locations);
    case 'doctor':
      return doctor(locations, values.json);
    case 'keeper':
      // Started by the service's host, detached; not for people (docs/ARCHITECTURE.md §11).
      return runKeeper({
        locations,
        env: process.env,
        serve: { command: process.execPath, args: [fileURLToPath(import.meta.url), 'serve', '--notify-ready'] },
        log: (line) => err(`${new Date().toISOString()} ${line}`),
      });
    case 'discard':
      return discard(locations, action, values.yes);
    case 'take':
      return take(
        locations,
        action,
        { merge: values.merge, squash: values.squash, rebase: values.rebase },
        { preview: values['dry-run'] || values.preview, json: values.json },
      );
    case 'worktrees':
      return worktrees(locations, { removeTaken: values['remove-taken'], json: values.json });
    case 'key':
      return key(locations, action, values.management ? 'management' : 'api', { validate: !values['no-validate'], json: values.json });
    default:
      throw new UsageError(`Unknown command "${command}".`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))) {
      err(`${error.message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else if (error instanceof ServiceError || error instanceof Error) {
      err(error.message);
      process.exitCode = 1;
    } else {
      err(String(error));
      process.exitCode = 1;
    }
  },
);
