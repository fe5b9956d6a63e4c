/**
 * The contract over loopback HTTP (`openrouter-delegate serve --ui`), shaped exactly like the Electron
 * preload's API, so the pages cannot tell the hosts apart. The token comes in the URL's fragment
 * (never sent to a server); it is kept for this tab in sessionStorage and removed from the address bar.
 *
 * Whoever listens on 127.0.0.1:<port> is not necessarily the service: once it stops, any local user may bind
 * the port. So the page sends its token, and any call (a body may hold a key the user typed), only to a server
 * that has just proved it holds the token: the page sends a random challenge to `/api/hello` and checks the
 * HMAC-SHA256 of it under the token (WebCrypto; 127.0.0.1 is a secure context). Only then does it open the
 * event stream with its token, and it makes calls only while that stream is open. When the stream drops the
 * page is unverified again. A server that answers without the right proof is never sent the token: since the
 * service makes a new token at every start, that is a restarted service (or someone else), and this page's
 * link is dead for good.
 */
import { contractCallError, isContractEvent } from '../../src-main/contract/api.js';
import type { ContractApi, ContractEvent } from '../../src-main/contract/api.js';
import { CONTRACT_METHODS } from '../../src-main/contract/method-names.js';
import type { WireError } from '../../src-main/contract/protocol.js';

const TOKEN_KEY = 'openrouter-delegate.token';
/** What the service's HMAC covers besides the challenge; the same as HELLO_LABEL in src-main/ipc/http-ui.ts. */
const HELLO_LABEL = 'openrouter-delegate settings page v1:';
const CHALLENGE_BYTES = 32;

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
const NO_TOKEN: WireError = { code: 'unauthorized', message: 'This page has no valid token. Open the URL `openrouter-delegate serve --ui` printed.' };
/** What every call of a page whose link died says (its banner says it too, from onConnection's `stale`). */
const STALE: WireError = {
  code: 'unauthorized',
  message:
    'The service restarted, or something else now answers on this port, so this page’s link no longer works. Open the new URL that `openrouter-delegate serve --ui` printed.',
};

/**
 * `connected`: the event stream is open to the verified service; `away`: it is not (restarting, stopped),
 * and the page keeps trying; `stale`: something answered without the proof, and the page has given up.
 */
export type ConnectionState = 'connected' | 'away' | 'stale';
export type ConnectionListener = (state: ConnectionState) => void;

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function fromHex(text: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(new ArrayBuffer(text.length / 2));
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/**
 * Asks whoever listens for the HMAC of a fresh challenge under `token`, sending no token: 'verified' when the
 * proof is right, 'stale' when something answered without it. Throws when nothing answers (fetch failed).
 */
export async function verifyHello(token: string, fetchImpl: typeof fetch, cryptoImpl: Crypto): Promise<'verified' | 'stale'> {
  const challenge = hex(cryptoImpl.getRandomValues(new Uint8Array(CHALLENGE_BYTES)));
  const response = await fetchImpl(`/api/hello?challenge=${challenge}`, { cache: 'no-store' });
  let proof: unknown;
  try {
    proof = ((await response.json()) as { proof?: unknown } | null)?.proof;
  } catch {
    return 'stale';
  }
  if (!response.ok || typeof proof !== 'string' || !/^[0-9a-f]{64}$/.test(proof)) return 'stale';
  const encoder = new TextEncoder();
  const key = await cryptoImpl.subtle.importKey('raw', encoder.encode(token), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  // verify() compares in constant time, unlike comparing hex strings here.
  const valid = await cryptoImpl.subtle.verify('HMAC', key, fromHex(proof), encoder.encode(`${HELLO_LABEL}${challenge}`));
  return valid ? 'verified' : 'stale';
}

/** The contract's API over loopback HTTP, plus what only this host has: the state of its link to the service. */
export type HttpHost = ContractApi & { onConnection(listener: ConnectionListener): () => void };

/** The host the settings page uses when served over loopback: one function per contract method, onEvent, onConnection. */
export function httpHost(token: string | null, fetchImpl: typeof fetch = fetch.bind(globalThis), cryptoImpl: Crypto = globalThis.crypto): HttpHost {
  const link = new VerifiedLink(token, fetchImpl, cryptoImpl);
  const api: Record<string, unknown> = {};
  for (const method of CONTRACT_METHODS) api[method] = (params?: unknown) => link.call(method, params);
  api.onEvent = (listener: (event: ContractEvent) => void) => link.onEvent(listener);
  api.onConnection = (listener: ConnectionListener) => link.onConnection(listener);
  return Object.freeze(api) as HttpHost;
}

/**
 * The page's one link to the service: it verifies whoever listens, keeps one event stream open for all listeners,
 * and lets calls out only while that stream is open. The state changes only through enter(), so every waiting call
 * and every connection listener hears each change.
 */
class VerifiedLink {
  private readonly authorization: string;
  private readonly eventListeners = new Set<(event: ContractEvent) => void>();
  private readonly connectionListeners = new Set<ConnectionListener>();
  /** Calls waiting for the connection attempt under way. */
  private readonly waiters = new Set<{ resolve: () => void; reject: (error: Error) => void }>();
  private phase: 'connecting' | ConnectionState = 'connecting';
  private announced: ConnectionState | null = null;
  private running = false;
  /** Ends the open event stream (once the link is found dead while it is open). */
  private closeStream: (() => void) | null = null;

  constructor(
    private readonly token: string | null,
    private readonly fetchImpl: typeof fetch,
    private readonly cryptoImpl: Crypto,
  ) {
    this.authorization = `Bearer ${token ?? ''}`;
  }

  onEvent(listener: (event: ContractEvent) => void): () => void {
    this.eventListeners.add(listener);
    this.ensureRunning();
    return () => this.eventListeners.delete(listener);
  }

  onConnection(listener: ConnectionListener): () => void {
    this.connectionListeners.add(listener);
    this.ensureRunning();
    return () => this.connectionListeners.delete(listener);
  }

  /** One contract call, sent once the stream to the verified service is open; its result, or its error thrown. */
  async call(method: string, params: unknown): Promise<unknown> {
    await this.ready();
    let response: Response;
    try {
      response = await this.fetchImpl(`/api/call/${method}`, {
        method: 'POST',
        headers: { authorization: this.authorization, 'content-type': 'application/json' },
        body: JSON.stringify(params ?? {}),
      });
    } catch {
      throw contractCallError(UNREACHABLE);
    }
    // The verified service knows our token; a 401 means another one (with another token) answers now.
    if (response.status === 401) {
      this.enter('stale');
      throw contractCallError(STALE);
    }
    let reply: Reply;
    try {
      reply = (await response.json()) as Reply;
    } catch {
      throw contractCallError({ code: 'internal', message: `The service answered ${response.status} with something that is not JSON.` });
    }
    if (reply.ok) return reply.result;
    throw contractCallError(reply.error);
  }

  private enter(next: ConnectionState): void {
    // Dead is final: nothing after it may send the token again.
    if (this.phase === 'stale') return;
    this.phase = next;
    if (next === 'stale') this.closeStream?.();
    for (const waiter of this.waiters) {
      if (next === 'connected') waiter.resolve();
      else waiter.reject(contractCallError(next === 'stale' ? STALE : UNREACHABLE));
    }
    this.waiters.clear();
    if (next === this.announced) return;
    this.announced = next;
    for (const listener of this.connectionListeners) listener(next);
  }

  /** A method, so that checks after enter() are not narrowed away by the compiler. */
  private dead(): boolean {
    return this.phase === 'stale';
  }

  /** Resolves once calls may go out: the stream to the verified service is open. */
  private ready(): Promise<void> {
    if (this.token === null) return Promise.reject(contractCallError(NO_TOKEN));
    if (this.phase === 'stale') return Promise.reject(contractCallError(STALE));
    if (this.phase === 'connected') return Promise.resolve();
    if (this.phase === 'away' && this.running) return Promise.reject(contractCallError(UNREACHABLE));
    return new Promise((resolve, reject) => {
      this.waiters.add({ resolve, reject });
      this.ensureRunning();
    });
  }

  private ensureRunning(): void {
    if (this.running || this.token === null || this.phase === 'stale') return;
    this.running = true;
    void this.follow();
  }

  /** One stream for all listeners; verifies, then connects, again after every drop, with a growing pause. */
  private async follow(): Promise<void> {
    let pause = 250;
    while (this.phase !== 'stale' && (this.eventListeners.size > 0 || this.connectionListeners.size > 0 || this.waiters.size > 0)) {
      this.phase = 'connecting';
      const abort = new AbortController();
      this.closeStream = () => abort.abort();
      try {
        if ((await verifyHello(this.token ?? '', this.fetchImpl, this.cryptoImpl)) === 'stale') {
          this.enter('stale');
          break;
        }
        const response = await this.fetchImpl('/api/events', { headers: { authorization: this.authorization }, signal: abort.signal });
        if (response.ok && response.body) {
          await readJsonLines(response.body, (payload) => this.receive(payload, () => (pause = 250)));
        } else {
          await response.body?.cancel();
        }
      } catch {
        // Refused or dropped: the service is restarting or gone. Say so, and try again.
      } finally {
        this.closeStream = null;
      }
      this.enter('away');
      if (this.dead()) break;
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, 4000);
    }
    this.running = false;
  }

  /** One line of the stream: the first says it is open (so `connected`); the rest are events for the listeners. */
  private receive(payload: unknown, onOpen: () => void): void {
    if ((payload as { event?: unknown }).event === 'stream.open') {
      onOpen();
      this.enter('connected');
    } else if (isContractEvent(payload)) {
      for (const listener of this.eventListeners) listener(payload);
    }
  }
}

/** Reads newline-delimited JSON until the stream ends, handing each line to `onPayload`; a line that is not JSON is skipped. */
async function readJsonLines(body: NonNullable<Response['body']>, onPayload: (payload: unknown) => void): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
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
      onPayload(payload);
    }
  }
}
