/**
 * Answering an HTTP request refused before its body is read, shared by the metering gateway (core/gateway) and its
 * listener (ipc/gateway-server.ts), which sit on layers that cannot import each other.
 */
import type http from 'node:http';

/** How long a refused request's body is waited for by default (SECURITY.md §2). */
export const REFUSED_BODY_MS = 1_000;

/**
 * Answers a request that is refused before its body is read only once the body has arrived (and been thrown
 * away): an answer sent while the client still sends is lost to the reset when the socket closes under it.
 * With `withinMs` (a request that holds no live job's token, or names another Host), a body still coming by then is
 * not waited for: the answer goes and the socket is closed, so a stranger cannot hold it by trickling a body.
 */
export function answerAfterBody(req: http.IncomingMessage, answer: () => void, withinMs?: number): void {
  if (req.complete || req.readableEnded) {
    answer();
    return;
  }
  req.resume();
  if (withinMs === undefined) {
    req.once('end', answer);
    return;
  }
  const deadline = setTimeout(() => {
    answer();
    req.socket.destroy();
  }, withinMs);
  req.once('end', () => {
    clearTimeout(deadline);
    answer();
  });
  req.once('close', () => clearTimeout(deadline));
}
