/** The loopback listeners (the settings page, the metering gateway): 127.0.0.1 only, never shared with another process. */
import type net from 'node:net';
import type { AddressInfo } from 'node:net';

export const LOOPBACK = '127.0.0.1';

/** Listens on 127.0.0.1:`port` (0: any free port); resolves with the port, rejects (EADDRINUSE …) without listening. */
export function listenLoopback(server: net.Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen({ host: LOOPBACK, port, exclusive: true }, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
