import type { ServiceConnection } from '../service-connection.js';

/** What every tool handler gets: the line to the service. Tools hold no state of their own. */
export interface ToolDeps {
  service: Pick<ServiceConnection, 'call'>;
}
