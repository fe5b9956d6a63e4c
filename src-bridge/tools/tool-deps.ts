import type { ServiceConnection } from '../service-connection.js';

/** What every tool handler gets: the line to the service, and the user's settings as they are now. Tools hold no state of their own. */
export interface ToolDeps {
  service: Pick<ServiceConnection, 'call'>;
  /** The longest answer a call that finds its job ended shows itself (the `inlineAnswerChars` setting; 0: none). */
  inlineAnswerChars: () => number;
}
