import { ServiceError } from '../../src-main/contract/index.js';

/** The ServiceError `promise` fails with; anything else it throws is thrown on, and a success fails the test. */
export async function serviceFailure(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected the call to fail with a ServiceError');
}
