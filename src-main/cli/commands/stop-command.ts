/**
 * `openrouter-delegate stop [--kill-jobs]`: stops the running service. Delegated jobs keep running and wait, retrying,
 * for the next start unless `--kill-jobs` ends them. Exit 0 also when no service runs.
 */
import type { Locations } from '../../platform/locations.js';
import { connect, out } from '../support/command-support.js';

export async function stopCommand(locations: Locations, killJobs: boolean): Promise<number> {
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
