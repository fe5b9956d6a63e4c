import { describe, expect, it } from 'vitest';
import { allOrFirstError, valueOf } from '../../src-main/common/promises.js';

const after = <T>(ms: number, value: T, fail = false): Promise<T> =>
  new Promise((resolve, reject) => setTimeout(() => (fail ? reject(new Error(String(value))) : resolve(value)), ms));

describe('allOrFirstError', () => {
  it('answers every value in the order given', async () => {
    await expect(allOrFirstError<[number, string]>([after(20, 1), after(1, 'two')])).resolves.toEqual([1, 'two']);
  });

  it('throws only once every step has settled, the first failure in the order given', async () => {
    let slowDone = false;
    const slow = after(40, 'slow').then((value) => ((slowDone = true), value));
    const outcome = allOrFirstError([after(30, 'first', true), after(1, 'second', true), slow]);
    await expect(outcome).rejects.toThrow('first');
    expect(slowDone).toBe(true);
  });
});

describe('valueOf', () => {
  it("answers a settled step's value, and throws its failure only where it is read", async () => {
    const [done, failed] = await Promise.allSettled([after(5, 'done'), after(1, 'broke', true)]);
    expect(valueOf(done)).toBe('done');
    expect(() => valueOf(failed)).toThrow('broke');
  });
});
