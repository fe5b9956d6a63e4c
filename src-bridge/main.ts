/**
 * `openrouter-delegate-mcp`: the stdio MCP bridge Claude Code launches. Stateless and thin:
 * it forwards each tool call to the service and renders the answer. Logs go to stderr only
 * (stdout is the MCP channel). It exits when stdin closes.
 */
// First: it configures zod before any schema is built.
import './zod-jitless.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { APP_VERSION, ENV, ServiceError, defaultSettings } from '../src-main/contract/index.js';
import type { Settings } from '../src-main/contract/index.js';
import { resolveLocations } from '../src-main/platform/locations.js';
import { serverInstructions } from './instructions.js';
import { ServiceConnection } from './service-connection.js';
import { BridgeStdioTransport } from './stdio-transport.js';
import { registerTools } from './tools/registry.js';
import { caller } from './tools/delegate-common.js';

const noElicitationValidator: jsonSchemaValidator = {
  getValidator: () => () => ({ valid: false, data: undefined, errorMessage: 'openrouter-delegate-mcp does not use elicitation.' }),
};

function log(line: string): void {
  process.stderr.write(`[openrouter-delegate-mcp] ${line}\n`);
}

export interface BridgeHooks {
  /** Called once the first tools/list has been answered: the launcher then saves V8's code cache. */
  onWarm?: () => void;
}

export async function runBridge(hooks: BridgeHooks = {}): Promise<void> {
  // Claude Code passes no arguments; this one lets a user (and the packaged launchers' test) check an install.
  if (process.argv.slice(2).includes('--version')) {
    process.stdout.write(`${APP_VERSION}\n`);
    return;
  }
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
  let settings: Settings;
  try {
    settings = await service.call('settings.get', {});
    warm(service);
  } catch (error) {
    log(error instanceof ServiceError ? error.message : `could not reach the service: ${String(error)}`);
    settings = defaultSettings();
  }

  const server = new McpServer(
    { name: 'openrouter-delegate', title: 'OpenRouter Delegate', version: APP_VERSION },
    // The SDK builds an Ajv instance for elicitation schemas unless given a validator; this bridge
    // never elicits, and skipping Ajv saves a good part of the bridge's start-up.
    // The instructions ride in the system prompt of every parent request, tool search or not (instructions.ts).
    { capabilities: { tools: { listChanged: true } }, instructions: serverInstructions(settings.mode), jsonSchemaValidator: noElicitationValidator },
  );
  const tools = registerTools(server, { service, inlineAnswerChars: () => settings.inlineAnswerChars }, settings.mode);

  const applySettings = (next: Settings) => {
    const modeChanged = next.mode !== settings.mode;
    settings = next;
    if (modeChanged) tools.applyMode(next.mode);
  };
  service.on('settings.changed', applySettings);
  service.onConnected(() => {
    service.call('settings.get', {}).then(applySettings, () => undefined);
    warm(service);
  });

  const transport = new BridgeStdioTransport();
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
  const onWarm = hooks.onWarm;
  if (onWarm) {
    const handle = transport.onmessage;
    transport.onmessage = (message) => {
      handle?.(message);
      if ('method' in message && message.method === 'tools/list') {
        transport.onmessage = handle;
        setImmediate(onWarm);
      }
    };
  }
}

/**
 * Tells the service this session may delegate soon, with its PATH: it gets a box ready for the first job. Never
 * waited on; a service that does not know the call (an older one) or cannot answer costs nothing.
 */
function warm(service: ServiceConnection): void {
  service.call('jobs.warm', { caller: caller() }).catch(() => undefined);
}
