/**
 * Starting the headless service from another process (docs/ARCHITECTURE.md §1, §11): the bridge does it when no
 * service answers, the watchdog when the service it watched was killed. `openrouter-delegate serve
 * --notify-ready`, detached so it outlives its starter, its log appended to the service log; resolves once it
 * says `ready` (or `already-running`: someone else was quicker, which is just as good).
 */
import { ServiceError } from '../contract/protocol.js';
import { formatMs } from '../common/format.js';
import { spawnDetached } from './detached.js';
import type { Locations } from './locations.js';

export interface HeadlessStart {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  locations: Pick<Locations, 'logs'>;
  timeoutMs?: number;
}

export function startHeadlessService(input: HeadlessStart): Promise<'ready' | 'already-running'> {
  const { child, logFile } = spawnDetached({ command: input.command, args: input.args, env: input.env, locations: input.locations, stdout: 'pipe' });
  const timeoutMs = input.timeoutMs ?? 15_000;
  return new Promise((resolve, reject) => {
    let output = '';
    const finish = (outcome: 'ready' | 'already-running' | Error) => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
      child.stdout?.destroy();
      child.unref();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const said = /^(ready|already-running)$/m.exec(output);
      if (said) finish(said[1] as 'ready' | 'already-running');
    };
    const onExit = (code: number | null) =>
      finish(new ServiceError('unavailable', `The OpenRouter Delegate service exited (code ${code ?? 'signal'}) before it was ready. See ${logFile}.`));
    const onError = (error: Error) =>
      finish(new ServiceError('unavailable', `Could not start the OpenRouter Delegate service (${input.command}): ${error.message}`));
    const timer = setTimeout(
      () => finish(new ServiceError('unavailable', `The OpenRouter Delegate service did not become ready within ${formatMs(timeoutMs)}. See ${logFile}.`)),
      timeoutMs,
    );
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}
