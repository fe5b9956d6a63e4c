/**
 * The contract over loopback HTTP (`openrouter-delegate serve --ui`), shaped exactly like the Electron
 * preload's API, so the pages cannot tell the hosts apart. The token comes in the URL's fragment
 * (never sent to a server); it is kept for this tab in sessionStorage and removed from the address bar.
 */
import { contractCallError, isContractEvent } from '../../src-main/contract/api.js';
import type { ContractApi, ContractEvent } from '../../src-main/contract/api.js';
import { CONTRACT_METHODS } from '../../src-main/contract/method-names.js';
import type { WireError } from '../../src-main/contract/protocol.js';

const TOKEN_KEY = 'openrouter-delegate.token';

/** Reads `#token=…` once, keeps it for this tab, and leaves the rest of the fragment (the page) in place. */
export function takeToken(location: Location, history: History, storage: Storage): string | null {
  const match = /(?:^#|&)token=([0-9a-f]{64})/.exec(location.hash);
  if (match?.[1]) {
    storage.setItem(TOKEN_KEY, match[1]);
    const rest = location.hash.replace(/(?:^#|&)token=[0-9a-f]{64}/, '').replace(/^&/, '');
    history.replaceState(null, '', `${location.pathname}${location.search}${rest ? `#${rest.replace(/^#/, '')}` : ''}`);
    return match[1];
  }
  return storage.getItem(TOKEN_KEY);
}

type Reply = { ok: true; result: unknown } | { ok: false; error: WireError };

const UNREACHABLE: WireError = {
  code: 'unavailable',
  message: 'The service is not answering (it may be restarting). This page reconnects by itself once it is back.',
};

/** Listeners hear service events, plus `connected` / `disconnected` as the event stream opens and drops. */
export type ConnectionListener = (connected: boolean) => void;

export function httpHost(token: string | null, fetchImpl: typeof fetch = fetch.bind(globalThis)): ContractApi & { onConnection(listener: ConnectionListener): () => void } {
  const headers = { authorization: `Bearer ${token ?? ''}`, 'content-type': 'application/json' };
  const api: Record<string, unknown> = {};
  for (const method of CONTRACT_METHODS) {
    api[method] = async (params?: unknown) => {
      let response: Response;
      try {
        response = await fetchImpl(`/api/call/${method}`, { method: 'POST', headers, body: JSON.stringify(params ?? {}) });
      } catch {
        throw contractCallError(UNREACHABLE);
      }
      if (response.status === 401) throw contractCallError({ code: 'unauthorized', message: 'This page has no valid token. Open the URL `openrouter-delegate serve --ui` printed.' });
      let reply: Reply;
      try {
        reply = (await response.json()) as Reply;
      } catch {
        throw contractCallError({ code: 'internal', message: `The service answered ${response.status} with something that is not JSON.` });
      }
      if (reply.ok) return reply.result;
      throw contractCallError(reply.error);
    };
  }

  const eventListeners = new Set<(event: ContractEvent) => void>();
  const connectionListeners = new Set<ConnectionListener>();
  let running = false;
  let connected = false;
  const setConnected = (value: boolean) => {
    if (value === connected) return;
    connected = value;
    for (const listener of connectionListeners) listener(value);
  };

  /** One stream for all listeners; reconnects with a growing pause while anyone listens. */
  async function follow(): Promise<void> {
    let pause = 250;
    while (eventListeners.size > 0 || connectionListeners.size > 0) {
      try {
        const response = await fetchImpl('/api/events', { headers: { authorization: headers.authorization } });
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffered = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffered += value;
          let newline: number;
          while ((newline = buffered.indexOf('\n')) !== -1) {
            const line = buffered.slice(0, newline).trim();
            buffered = buffered.slice(newline + 1);
            if (!line) continue;
            let payload: unknown;
            try {
              payload = JSON.parse(line);
            } catch {
              continue;
            }
            if ((payload as { event?: unknown }).event === 'stream.open') {
              pause = 250;
              setConnected(true);
            } else if (isContractEvent(payload)) {
              for (const listener of eventListeners) listener(payload);
            }
          }
        }
      } catch {
        // Refused or dropped: the service is restarting or gone. Say so, and try again.
      }
      setConnected(false);
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, 4000);
    }
    running = false;
  }
  const ensureRunning = () => {
    if (running) return;
    running = true;
    void follow();
  };

  api.onEvent = (listener: (event: ContractEvent) => void) => {
    eventListeners.add(listener);
    ensureRunning();
    return () => eventListeners.delete(listener);
  };
  api.onConnection = (listener: ConnectionListener) => {
    connectionListeners.add(listener);
    ensureRunning();
    return () => connectionListeners.delete(listener);
  };
  return Object.freeze(api) as ContractApi & { onConnection(listener: ConnectionListener): () => void };
}
