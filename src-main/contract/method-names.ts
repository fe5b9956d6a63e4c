/**
 * The contract's method names as a plain list, for the preload and the loopback page: a sandboxed preload must stay small
 * and cannot pull zod in, so it cannot read Object.keys(CONTRACT). The compiler checks that every
 * name is a contract method and that none is missing; a test checks the order too.
 */
import type { MethodName } from './methods.js';

export const CONTRACT_METHODS = [
  'service.status',
  'service.stop',
  'settings.get',
  'settings.update',
  'secrets.status',
  'secrets.set',
  'secrets.remove',
  'delegateKey.set',
  'delegateKey.rotate',
  'balance.get',
  'models.list',
  'jobs.start',
  'jobs.followup',
  'jobs.status',
  'jobs.result',
  'jobs.cancel',
  'jobs.diff',
  'jobs.discard',
  'jobs.takePreview',
  'jobs.take',
  'jobs.requests',
  'jobs.list',
  'jobs.warm',
  'worktrees.list',
  'worktrees.removeTaken',
  'jobs.killAll',
  'spend.report',
  'jobs.scoreboard',
  'verify.commands',
  'setup.status',
  'setup.connect',
  'setup.disconnect',
  'setup.doctor',
  'settingsPage.open',
] as const satisfies readonly MethodName[];

type Unlisted = Exclude<MethodName, (typeof CONTRACT_METHODS)[number]>;
/** Fails to compile when the contract gains a method this list lacks. */
export const CONTRACT_METHODS_COMPLETE: [Unlisted] extends [never] ? true : { missing: Unlisted } = true;
