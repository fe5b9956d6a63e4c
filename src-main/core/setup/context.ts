/**
 * The real wiring of install, uninstall and doctor: where `claude` is, which config file Claude Code
 * uses, what this installation's bridge command is, and live clients for the keychain and OpenRouter.
 * Each caller says where its Node and its bridge script are, and how to reach the running service: the CLI
 * dials its socket, the service itself passes a link to its own dispatcher (setup never opens a transport).
 */
import { access } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Locations } from '../../platform/locations.js';
import { probeSandbox } from '../../platform/sandbox-probe.js';
import type { SandboxAvailability } from '../../platform/sandbox-probe.js';
import { locateClaude } from '../jobs/process/claude-locator.js';
import { OpenRouterClient } from '../openrouter/client.js';
import { ATTRIBUTION, baseUrlFrom } from '../openrouter/endpoint.js';
import { SecretStore } from '../secrets/secret-store.js';
import { SettingsStore } from '../settings/store.js';
import { ClaudeRegistration, bridgeCommand, claudeRunner, claudeUserConfigFile, lookupRegistration } from './claude-registration.js';
import type { RegistrationState, StdioCommand } from './claude-registration.js';
import type { DoctorDeps, ServiceLink } from './doctor.js';
import { errorMessage } from '../../common/errors.js';

export interface SetupContextInput {
  env: NodeJS.ProcessEnv;
  locations: Locations;
  /** The Node.js that runs the bridge. */
  nodePath: string;
  /** Absolute path of this installation's dist/bridge/openrouter-delegate-mcp.js. */
  bridgeScript: string;
  /** The packaged app's bridge launcher; when set, Claude Code is given it instead of node + script. */
  bridgeLauncher?: string | undefined;
  /** Default: os.homedir() (what Claude Code uses). */
  homeDir?: string;
  /** A link to the running service, or null when none answers (other failures throw). */
  connectService: () => Promise<ServiceLink | null>;
  /** The folder a CLI's doctor runs in, for the verify commands of its repository; the service's has none. */
  projectFolder?: string | undefined;
  /** Whether the sandbox runs delegates' programs here. Default: probeSandbox with `env`, asked afresh. */
  probeSandbox?: () => Promise<SandboxAvailability>;
}

export interface SetupContext {
  expected: StdioCommand;
  claudeConfigFile: string;
  settings: SettingsStore;
  /** `claude`, found as the service finds it; throws `claude_missing` with how to install it. */
  locateClaude(): Promise<string>;
  /** Install/uninstall through `claude mcp`; finds `claude` first (and throws when it is missing). */
  registration(): Promise<ClaudeRegistration>;
  bridgeScriptExists(): Promise<boolean>;
  /** Claude Code's user-scope registration of the bridge, compared with `expected`. */
  lookup(): Promise<RegistrationState>;
  doctorDeps(): DoctorDeps;
}

export async function createSetupContext(input: SetupContextInput): Promise<SetupContext> {
  const { env, locations } = input;
  const expected = bridgeCommand({ nodePath: input.nodePath, bridgeScript: input.bridgeScript, launcher: input.bridgeLauncher, home: locations.home });
  const claudeConfigFile = await claudeUserConfigFile(env, input.homeDir ?? os.homedir());
  // A broken settings file still loads (the defaults stay in force); `problem` says what is wrong.
  const settings = new SettingsStore({ file: locations.settingsFile });
  const unreadable = await settings.load().then(
    () => undefined,
    (error: unknown) => `Settings file ${locations.settingsFile} cannot be read: ${errorMessage(error)}`,
  );
  const locate = () => locateClaude({ env, setting: settings.current.claudePath });
  const bridgeScriptExists = () =>
    access(input.bridgeLauncher ?? input.bridgeScript).then(
      () => true,
      () => false,
    );
  const runnerFor = (claudePath: string) => claudeRunner({ claudePath, env });
  return {
    expected,
    claudeConfigFile,
    settings,
    locateClaude: locate,
    bridgeScriptExists,
    lookup: () => lookupRegistration({ configFile: claudeConfigFile, expected }),
    async registration() {
      if (!(await bridgeScriptExists())) {
        throw new Error(
          `The bridge is not built: ${input.bridgeLauncher ?? input.bridgeScript} is missing. Run \`npm run build\` (or reinstall), then try again.`,
        );
      }
      return new ClaudeRegistration({ runner: runnerFor(await locate()), configFile: claudeConfigFile, expected });
    },
    doctorDeps: () => ({
      locations,
      env,
      locateClaude: locate,
      claudeRunner: runnerFor,
      lookupRegistration: () => lookupRegistration({ configFile: claudeConfigFile, expected }),
      expectedBridge: expected,
      bridgeScriptExists,
      connectService: input.connectService,
      secrets: new SecretStore({ service: locations.keychainService, env }),
      openRouter: new OpenRouterClient({ baseUrl: baseUrlFrom(env), appTitle: ATTRIBUTION.title, appUrl: ATTRIBUTION.url }),
      baseUrl: baseUrlFrom(env),
      loadSettings: async () => ({
        file: settings.file,
        exists: await access(settings.file).then(
          () => true,
          () => false,
        ),
        problem: unreadable ?? settings.problem,
        sandbox: settings.current.sandbox,
        perDayUsd: settings.current.budgets.perDayUsd,
        verifyCommands: settings.current.verifyCommands,
      }),
      projectFolder: input.projectFolder,
      probeSandbox: input.probeSandbox ?? (() => probeSandbox({ env })),
      // dist/bridge/… → dist/cli/openrouter-delegate.js; the packaged app's launcher has no commands to link.
      cli: input.bridgeLauncher
        ? undefined
        : { nodePath: input.nodePath, script: path.join(path.dirname(path.dirname(input.bridgeScript)), 'cli', 'openrouter-delegate.js') },
    }),
  };
}
