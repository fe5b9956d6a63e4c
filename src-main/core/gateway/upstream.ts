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

/** Resolves once OpenRouter's status and headers are in; rejects when it cannot be reached (or `signal` aborts). */
export function postUpstream(url: string, headers: Record<string, string>, body: Buffer | string, signal: AbortSignal): Promise<UpstreamAnswer> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const client = target.protocol === 'https:' ? https : http;
    const request = client.request(
      target,
      {
        method: 'POST',
        agent: target.protocol === 'https:' ? agents['https:'] : agents['http:'],
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        signal,
      },
      (response) => {
        const flat: Record<string, string> = {};
        for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
        resolve({ status: response.statusCode ?? 502, headers: flat, body: response });
      },
    );
    request.once('error', reject);
    request.end(body);
  });
}
