/**
 * `openrouter-delegate doctor`: every thing that must hold for Claude Code to delegate, checked one by
 * one, each answer saying what to do when it does not hold. Structured results, so the CLI prints them
 * and the settings window can show the same checks (render them with present.ts). This is the runner and the
 * report; the checks themselves are in doctor-checks.ts.
 *
 * Everything that touches the outside (claude, the service, the keychain, OpenRouter, the disk) comes
 * in through DoctorDeps, so each verdict can be tested with fakes; the real wiring is setup/context.ts, with
 * the link to the service given by whoever runs the doctor (the CLI dials the socket; the service calls itself).
 */
import path from 'node:path';
import { APP_VERSION } from '../../contract/index.js';
import { errorMessage } from '../../common/errors.js';
import {
  checkClaude,
  checkKey,
  checkKeychain,
  checkOpenRouter,
  checkRegistration,
  checkRunningService,
  checkRuntime,
  checkSandbox,
  checkSettings,
  checkWorktrees,
  fail,
  warn,
} from './doctor-checks.js';
import type { DoctorDeps, ServiceLink, Verdict } from './doctor-checks.js';
import { checkCommandsOnPath } from './path-check.js';
import { checkVerifyCommands } from './verify-check.js';

// The checks' inputs and judges, also known by the doctor's name: setup/context.ts and the tests import them from here.
export { HEADLESS_KEYRING, WORKTREES_WARN_BYTES, judgeRuntimeFiles, judgeSandbox, judgeWorktrees } from './doctor-checks.js';
export type { DoctorDeps, PathFacts, RuntimeFacts, ServiceLink, Verdict } from './doctor-checks.js';

export type { CheckStatus } from '../../contract/index.js';

export const CHECK_IDS = [
  'claude',
  'registration',
  'commands',
  'service',
  'runtime',
  'settings',
  'sandbox',
  'keychain',
  'key',
  'openrouter',
  'worktrees',
  'verify',
] as const;
export type CheckId = (typeof CHECK_IDS)[number];

export const CHECK_TITLES: Record<CheckId, string> = {
  claude: 'Claude Code CLI',
  registration: 'Bridge registered with Claude Code',
  commands: 'Commands on your PATH',
  service: 'Service',
  runtime: 'Socket folder and token',
  settings: 'Settings file',
  sandbox: "Sandbox for delegates' programs",
  keychain: 'Keychain',
  key: 'OpenRouter key',
  openrouter: 'OpenRouter reachable',
  worktrees: 'Kept worktrees',
  verify: 'Verify commands here',
};

export interface CheckResult extends Verdict {
  id: CheckId;
  title: string;
}

export interface DoctorReport {
  version: string;
  /** False when any check failed (a warning alone keeps it true). */
  ok: boolean;
  checks: CheckResult[];
}

/** Runs every check, the service's first (the key and socket checks ask whether it answers), into one report. */
export async function runDoctor(deps: DoctorDeps): Promise<DoctorReport> {
  let service: ServiceLink | null = null;
  let serviceVerdict: Verdict;
  try {
    service = await deps.connectService();
    serviceVerdict = service
      ? await checkRunningService(service)
      : warn('not running.', 'Nothing to do: the bridge starts it when Claude Code first calls a tool (or run `openrouter-delegate serve`).');
  } catch (error) {
    serviceVerdict = fail(errorMessage(error));
  }
  try {
    const [claude, registration, commands, runtime, settings, sandbox, keychain, key, openrouter, worktrees, verify] = await Promise.all([
      checkClaude(deps),
      checkRegistration(deps),
      checkCommandsOnPath(deps).catch((error: unknown) => fail(`the check itself failed: ${errorMessage(error)}`)),
      checkRuntime(deps, service !== null),
      checkSettings(deps),
      checkSandbox(deps),
      checkKeychain(deps),
      checkKey(deps, service),
      checkOpenRouter(deps),
      checkWorktrees(deps),
      // A settings file that cannot be read is the settings check's to report: here it only means nothing saved.
      deps
        .loadSettings()
        .then(
          (loaded) => loaded.verifyCommands ?? [],
          () => [],
        )
        .then((saved) => checkVerifyCommands(deps.projectFolder, saved, path.join(deps.locations.data, 'worktrees')))
        .catch((error: unknown) => fail(`the check itself failed: ${errorMessage(error)}`)),
    ]);
    const verdicts: Record<CheckId, Verdict> = {
      claude,
      registration,
      commands,
      service: serviceVerdict,
      runtime,
      settings,
      sandbox,
      keychain,
      key,
      openrouter,
      worktrees,
      verify,
    };
    const checks = CHECK_IDS.map((id) => ({ id, title: CHECK_TITLES[id], ...verdicts[id] }));
    return { version: APP_VERSION, ok: checks.every((check) => check.status !== 'fail'), checks };
  } finally {
    service?.close();
  }
}
