/**
 * A socket file with nobody behind it and its (now stale) token, as a service killed with SIGKILL leaves them:
 * quicker than killing a real service, and the same to whoever finds them (a hard link outlives the close).
 */
import { link, mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { writeToken } from '../../src-main/ipc/runtime-dir.js';
import type { Locations } from '../../src-main/platform/locations.js';

export async function leaveStaleSocket(locations: Pick<Locations, 'runtime' | 'socketPath' | 'tokenFile'>): Promise<void> {
  await mkdir(locations.runtime, { recursive: true, mode: 0o700 });
  const temp = path.join(locations.runtime, 'gone.sock');
  const gone = net.createServer();
  await new Promise<void>((resolve) => gone.listen(temp, resolve));
  await link(temp, locations.socketPath);
  await new Promise<void>((resolve) => gone.close(() => resolve()));
  await writeToken(locations.tokenFile);
}
