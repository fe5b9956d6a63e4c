/**
 * Independent steps run at once, all the way: unlike Promise.all, nothing is left in flight when it throws, so what
 * cleans up after a failure never races a step still under way. Throws the first failure, in the order given. A step
 * that is not a promise (a step skipped: `undefined`) is its own value.
 */
export async function allOrFirstError<T extends readonly unknown[]>(steps: { [K in keyof T]: T[K] | Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(steps);
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/**
 * A step's value once every step has settled (Promise.allSettled), or its failure, thrown where the value is read:
 * steps asked at once then fail as if asked one by one, and one whose answer is never read never fails the caller.
 */
export function valueOf<T>(outcome: PromiseSettledResult<T>): T {
  if (outcome.status === 'rejected') throw outcome.reason;
  return outcome.value;
}
