/**
 * The SDK's stdio MCP client transport with its messages sent one at a time, as the bridge sends its own
 * (src-bridge/stdio-transport.ts): the SDK adds a `once('drain')` listener to the child's stdin per message sent
 * while the pipe is full, so a test with sixteen calls in flight printed Node's MaxListenersExceededWarning.
 */
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { SendQueue } from '../../src-bridge/stdio-transport.js';

export class QueuedStdioClientTransport extends StdioClientTransport {
  private readonly sends = new SendQueue();

  override send(message: JSONRPCMessage): Promise<void> {
    return this.sends.run(() => super.send(message));
  }
}
