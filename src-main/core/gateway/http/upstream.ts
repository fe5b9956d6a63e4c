/**
 * One request to OpenRouter's Messages API from the gateway (docs/ARCHITECTURE.md §11), on node:http(s) with
 * keep-alive agents rather than fetch: the answer is a Node stream the gateway copies on as it arrives, with
 * less work per chunk than a web stream (the gateway's own throughput is what a streaming delegate waits on).
 */
import http from 'node:http';
import https from 'node:https';

const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 256 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 256 }),
};

export interface UpstreamAnswer {
  status: number;
  /** As received, lower-case names; a header sent more than once joined with ", ". */
  headers: Record<string, string>;
  body: http.IncomingMessage;
}

/**
 * Resolves once OpenRouter's status and headers are in; rejects when it cannot be reached (or `signal` aborts). A
 * kept-alive socket the other end closed as it sat idle fails the request written on it with ECONNRESET before any
 * answer: nothing was read of it there, so it is sent once more on a new connection, as Node's documentation of
 * `request.reusedSocket` advises (the soak met it: a job ended on a 502 its delegate did not cause).
 */
export async function postUpstream(url: string, headers: Record<string, string>, body: Buffer | string, signal: AbortSignal): Promise<UpstreamAnswer> {
  const first = await postOnce(url, headers, body, signal, true);
  if (!('stale' in first)) return first;
  if (signal.aborted) throw first.stale;
  // On a connection of its own: another socket in the pool may have gone stale the same way.
  const again = await postOnce(url, headers, body, signal, false);
  if ('stale' in again) throw again.stale;
  return again;
}

/** One try: the answer's head, or `stale` when a kept-alive socket was found reset before any answer. */
function postOnce(
  url: string,
  headers: Record<string, string>,
  body: Buffer | string,
  signal: AbortSignal,
  pooled: boolean,
): Promise<UpstreamAnswer | { stale: Error }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const client = target.protocol === 'https:' ? https : http;
    const request = client.request(
      target,
      {
        method: 'POST',
        agent: pooled ? (target.protocol === 'https:' ? agents['https:'] : agents['http:']) : false,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        signal,
      },
      (response) => {
        const flat: Record<string, string> = {};
        for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
        resolve({ status: response.statusCode ?? 502, headers: flat, body: response });
      },
    );
    request.once('error', (error: NodeJS.ErrnoException) => {
      if (request.reusedSocket && error.code === 'ECONNRESET') resolve({ stale: error });
      else reject(error);
    });
    request.end(body);
  });
}
