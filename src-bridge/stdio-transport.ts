/**
 * The bridge's stdio MCP transport: the SDK's, with its messages sent one at a time.
 *
 * The SDK's `send()` (1.32.2, pinned) writes, and when the pipe is full (Claude Code reading a large answer slowly)
 * adds a `once('drain')` listener of its own to stdout: sixteen answers ready at once on a full pipe were sixteen
 * listeners, and Node's MaxListenersExceededWarning in Claude Code's MCP log (modelcontextprotocol/typescript-sdk#2706
 * proposes one shared listener). Sent one at a time, a full pipe is waited for once; the other messages wait their
 * turn here, in order.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Runs sends one after another: each starts once the one before it has finished (or failed). */
export class SendQueue {
  private tail: Promise<void> = Promise.resolve();

  run(send: () => Promise<void>): Promise<void> {
    const sent = this.tail.then(send);
    this.tail = sent.catch(() => undefined);
    return sent;
  }
}

export class BridgeStdioTransport extends StdioServerTransport {
  private readonly sends = new SendQueue();

  override send(message: JSONRPCMessage): Promise<void> {
    return this.sends.run(() => super.send(message));
  }
}
