/**
 * The Claude Code page's answers over the contract: where the registration stands, and Connect /
 * Disconnect as `install` / `uninstall` do them — the same context, the same words.
 */
import { ServiceError } from '../../contract/index.js';
import type { SetupAction, SetupStatus } from '../../contract/index.js';
import { SERVER_NAME, formatCommand, mcpAddArgs } from './claude-registration.js';
import type { SetupContext } from './context.js';
import { describeInstall, describeUninstall } from './present.js';
import { errorMessage } from '../../common/errors.js';

export async function setupStatus(context: SetupContext): Promise<SetupStatus> {
  const { expected } = context;
  const [claude, state, bridgeExists] = await Promise.all([
    context.locateClaude().then(
      (found) => ({ path: found }),
      (error: unknown) => ({ path: null, problem: errorMessage(error) }),
    ),
    asSetupError(() => context.lookup()),
    context.bridgeScriptExists(),
  ]);
  const registeredCommand = !state.registered
    ? null
    : state.server.type === 'stdio'
      ? formatCommand(state.server.command, state.server.args)
      : `${state.server.type} ${state.server.url ?? ''}`.trim();
  return {
    serverName: SERVER_NAME,
    configFile: state.configFile,
    command: formatCommand(expected.command, expected.args),
    addCommand: formatCommand('claude', mcpAddArgs(SERVER_NAME, expected)),
    env: expected.env,
    registration: !state.registered ? 'absent' : state.matches ? 'registered' : 'different',
    registeredCommand,
    differences: state.registered ? state.differences : [],
    claude,
    bridgeExists,
  };
}

/** Errors of `claude mcp …` and of reading Claude Code's config already say what to do: keep their words. */
async function asSetupError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    throw new ServiceError('setup_failed', errorMessage(error));
  }
}

export async function connectClaude(context: SetupContext): Promise<SetupAction> {
  const outcome = await asSetupError(async () => (await context.registration()).install());
  return { lines: describeInstall(outcome), status: await setupStatus(context) };
}

export async function disconnectClaude(context: SetupContext): Promise<SetupAction> {
  const outcome = await asSetupError(async () => (await context.registration()).uninstall());
  return { lines: describeUninstall(outcome), status: await setupStatus(context) };
}
