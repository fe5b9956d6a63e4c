/**
 * `openrouter-delegate-mcp`: the stdio MCP bridge Claude Code launches. Stateless and thin:
 * it forwards each tool call to the service and renders the answer. Logs go to stderr only
 * (stdout is the MCP channel). It exits when stdin closes.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { APP_VERSION, ENV, ServiceError, defaultSettings } from '../src-main/contract/index.js';
import type { Settings } from '../src-main/contract/index.js';
import { resolveLocations } from '../src-main/ipc/locations.js';
import { ServiceConnection } from './service-connection.js';
import { describeOpenRouterModels, registerOpenRouterModelsTool } from './tools/openrouter-models.js';

function log(line: string): void {
  process.stderr.write(`[openrouter-delegate-mcp] ${line}\n`);
}

async function main(): Promise<void> {
  if (Number.parseInt(process.env[ENV.depth] ?? '0', 10) > 0) {
    log('refusing to run inside a delegated session: delegated sessions may not delegate again.');
    process.exitCode = 1;
    return;
  }
  const service = new ServiceConnection({ locations: resolveLocations(process.env), env: process.env, log });
  // Descriptions follow the policy, so the policy is needed before tools/list is answered.
  // stdin is buffered meanwhile; nothing is lost by connecting first.
  // If the service cannot be reached, still serve: each tool call retries and answers with
  // the reason, which Claude Code shows the user (a bridge that dies only says "failed").
  let settings: Settings = defaultSettings();
  try {
    settings = await service.call('settings.get', {});
  } catch (error) {
    log(error instanceof ServiceError ? error.message : `could not reach the service: ${String(error)}`);
  }

  const server = new McpServer(
    { name: 'openrouter-delegate', title: 'OpenRouter Delegate', version: APP_VERSION },
    { capabilities: { tools: { listChanged: true } } },
  );
  const models = registerOpenRouterModelsTool(server, { service }, settings.mode);

  const applySettings = (next: Settings) => {
    if (next.mode === settings.mode) return;
    settings = next;
    // update() sends notifications/tools/list_changed to the client.
    models.update({ description: describeOpenRouterModels(next.mode) });
  };
  service.on('settings.changed', applySettings);
  service.onConnected(() => {
    service.call('settings.get', {}).then(applySettings, () => undefined);
  });

  const transport = new StdioServerTransport();
  let shuttingDown = false;
  const shutdown = () => {
    if (shuttingDown) return;
    shuttingDown = true;
    service.close();
    void server.close().finally(() => process.exit(0));
  };
  process.stdin.once('end', shutdown);
  process.stdin.once('close', shutdown);
  transport.onclose = shutdown;
  await server.connect(transport);
}

main().catch((error: unknown) => {
  log(`fatal: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
