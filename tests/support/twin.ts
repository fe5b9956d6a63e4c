/**
 * The server this project replaces, claude-ollama-delegate-mcp@1.0.1 (a devDependency), set up for side-by-side
 * tests: a home of its own, and its "Ollama" — a fake of its own that speaks the Messages API the twin's
 * delegates call, plus Ollama's version probe. The scripted model plays both the twin's delegates and, where
 * a test runs an outer CLI against the same fake, the outer model.
 */
import path from 'node:path';
import { ROOT } from './built.js';
import { CLAUDE_CLI, ScriptedModel } from './fake-anthropic.js';
import type { ScriptedModelOptions } from './fake-anthropic.js';
import { FakeOpenRouter } from './fake-openrouter.js';
import { DelegationWorld, MODEL } from './delegation.js';

export const TWIN = path.join(ROOT, 'node_modules/claude-ollama-delegate-mcp/dist/index.js');

export interface TwinWorld {
  fake: FakeOpenRouter;
  model: ScriptedModel;
  /** The twin's home and project (its own fake OpenRouter is unused). */
  world: DelegationWorld;
  /** The environment to start the twin's MCP server with. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startTwin(prefix: string, modelOptions: ScriptedModelOptions = {}): Promise<TwinWorld> {
  const fake = new FakeOpenRouter();
  const model = new ScriptedModel(fake, modelOptions);
  fake.route('GET', '/api/api/version', (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"version":"0.12.0"}'));
  await fake.start();
  const world = new DelegationWorld({ prefix });
  await world.start();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: world.env.HOME ?? '',
    TMPDIR: world.env.TMPDIR ?? '',
    OLLAMA_MCP_BASE_URL: fake.baseUrl,
    OLLAMA_MCP_DEFAULT_MODEL: MODEL,
    OLLAMA_MCP_CLAUDE_BIN: CLAUDE_CLI,
    OLLAMA_MCP_STATE_DIR: path.join(world.home, 'twin-state'),
  };
  return {
    fake,
    model,
    world,
    env,
    async stop() {
      await world.stop();
      model.stop();
      await fake.stop();
    },
  };
}
