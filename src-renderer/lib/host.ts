/**
 * The page's one way to the service: the Electron preload's API when the page runs in the app's
 * window, else the loopback HTTP host. Pages import `api` and `onConnection` from here and nothing
 * else; which host is behind them they never learn.
 */
import type { ContractApi } from '../../src-main/contract/api.js';
import type { ConnectionListener } from './http-host.js';
import { httpHost, takeToken } from './http-host.js';

function pick(): { api: ContractApi; onConnection: (listener: ConnectionListener) => () => void } {
  const preload = window.openrouterDelegate;
  // In the app the service is in the same process: the connection cannot drop while the page lives.
  if (preload) return { api: preload, onConnection: () => () => undefined };
  const host = httpHost(takeToken(window.location, window.history, window.sessionStorage));
  // A new URL pasted into this tab changes only the fragment, which reloads nothing: start afresh with its token.
  window.addEventListener('hashchange', () => {
    if (!/(?:^#|&)token=[0-9a-f]{64}/.test(window.location.hash)) return;
    takeToken(window.location, window.history, window.sessionStorage);
    window.location.reload();
  });
  return { api: host, onConnection: (listener) => host.onConnection(listener) };
}

const chosen = pick();
export const api: ContractApi = chosen.api;
export const onConnection = chosen.onConnection;
