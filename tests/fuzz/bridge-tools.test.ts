/**
 * Fuzz of the MCP bridge (docs/ARCHITECTURE.md §3): the built `openrouter-delegate-mcp` over stdio with the
 * official SDK client, connected to a real service, called more than 5,000 times with arguments
 * generated from the input schemas the bridge itself advertises in tools/list: values the schema
 * accepts, and values it refuses (wrong types, out of range, too long, missing, not in the list).
 *
 * Nothing may start: the service runs with no OpenRouter key, so jobs.start refuses with `no_key`
 * before it spawns anything, and OPENROUTER_DELEGATE_CLAUDE points at a file that does not exist, so
 * there is no `claude` to spawn either (support/service.ts). The test checks that no job folder
 * appears and that neither the service nor the bridge has any child process, after every batch.
 *
 * Properties: the bridge and the service stay up; every call gets a well-formed MCP result (the SDK
 * client checks it, and the structured content against the tool's output schema); an error result
 * carries a text that explains the problem and is never one of the "something broke" fallbacks;
 * arguments the schema accepts are never refused as invalid input, arguments it refuses always are;
 * no call hangs.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobListSchema, JobResultSchema, JobViewSchema, ModelsReportSchema } from '../../src-main/contract/index.js';
import { IpcClient } from '../../src-main/ipc/client.js';
import { BRIDGE, assertBuilt } from '../support/built.js';
import { FakeOpenRouter } from '../support/fake-openrouter.js';
import { QueuedStdioClientTransport } from '../support/mcp-stdio-client.js';
import { makeTempHome } from '../support/temp-home.js';
import { generateInvalid, generateValid, judge } from './support/json-schema.js';
import type { JsonSchema, StringHints, Verdict } from './support/json-schema.js';
import { mutateJson, randomString } from './support/mutate.js';
import { Rng, fuzzScale, fuzzSeed, reproduceHint } from './support/prng.js';
import { descendants, fuzzEnv, jobFolders, procMemory, startFuzzService } from './support/service.js';
import type { FuzzService } from './support/service.js';
import { isRecord } from '../../src-main/common/errors.js';

const FILE = 'tests/fuzz/bridge-tools.test.ts';
const SEED = fuzzSeed();
const TARGET_CALLS = Math.round(5_000 * fuzzScale());
const CONCURRENCY = 16;
const BATCH = 500;
/** A call with no answer after this long is hung (the SDK client rejects it). */
const HANG_MS = 60_000;
const MAX_PROBLEMS = 25;

/** Texts that mean something broke rather than "your input is wrong". */
const BREAKAGE = [
  /unexpected error; see its log/i, // the bridge's fallback for an error that is not a ServiceError
  /The service failed while handling/i, // the service's answer to an exception it did not expect
  /Output validation error/i, // the bridge answered with structured content its own schema refuses
  /sent a malformed answer/i, // the service answered outside the contract
  /MCP error -32603/i,
];

/** What a successful result's structured content must be, per tool (the contract's schemas). */
const STRUCTURED: Record<string, z.ZodType> = {
  openrouter_models: ModelsReportSchema,
  delegate_list: JobListSchema,
  delegate_status: JobViewSchema,
  delegate_cancel: JobViewSchema,
  delegate_result: JobResultSchema,
};
/** Tools that can only succeed if a job exists, and none can. */
const NEEDS_A_JOB = new Set(['delegate_start', 'delegate_followup', 'delegate_status', 'delegate_result', 'delegate_cancel']);

interface Planned {
  tool: string;
  args: Record<string, unknown>;
  verdict: Verdict | 'unknown-tool';
}

/**
 * Independent optional fields mostly make a start that is refused early (both prompt and prompt_file,
 * a cwd that does not exist …): half the valid starts are nudged towards one that reaches the key check.
 */
function plausibleStart(rng: Rng, args: Record<string, unknown>): Record<string, unknown> {
  const start = { ...args };
  if ('prompt' in start && 'prompt_file' in start) delete start[rng.chance(0.5) ? 'prompt' : 'prompt_file'];
  if (!('prompt' in start) && !('prompt_file' in start)) start.prompt = 'List the files in this folder.';
  for (const field of ['cwd', 'model', 'permission_mode', 'timeout_minutes', 'add_dirs']) if (rng.chance(0.7)) delete start[field];
  return start;
}

/** The bridge's answer to arguments a tool's schema refuses (src-bridge/render/tool-refusal.ts). */
const SCHEMA_REFUSAL = /was not called: .*Fix the arguments and call it again\./s;

/** A few words for a tally of the error results, so the output shows how deep the calls got. */
function errorKind(text: string): string {
  if (SCHEMA_REFUSAL.test(text)) return 'input refused by the schema';
  if (/No OpenRouter key/.test(text)) return 'no key';
  if (/^No job|No conversation/.test(text)) return 'no such job';
  if (/not found|disabled/.test(text)) return 'no such tool';
  if (/policy|ceiling|OpenRouter has no model|above the user/.test(text)) return 'policy';
  return 'other request errors';
}

describe('MCP bridge fuzz (built bridge, real service, tools from their own schemas)', () => {
  const fake = new FakeOpenRouter();
  let service: FuzzService;
  let cleanup: () => Promise<void> = async () => {};
  let client: Client;
  let transport: QueuedStdioClientTransport;
  let bridgeLog = '';
  let hints: StringHints;
  /** Node's warnings in this process (the test's own MCP client): "11 drain listeners added" was one. */
  const listenerWarnings: string[] = [];
  const onWarning = (warning: Error) => {
    if (warning.name === 'MaxListenersExceededWarning') listenerWarnings.push(warning.message);
  };

  beforeAll(async () => {
    process.on('warning', onWarning);
    assertBuilt();
    await fake.start();
    const made = await makeTempHome('ord-fuzz-bridge-');
    cleanup = made.cleanup;
    const env = await fuzzEnv(made.home, fake.baseUrl);
    const project = path.join(made.home, 'project');
    await mkdir(path.join(project, 'dir'), { recursive: true });
    await writeFile(path.join(project, 'prompt.txt'), 'List the files in this folder.\n');
    await writeFile(path.join(project, 'empty.txt'), '\n');
    await writeFile(path.join(project, 'big.txt'), 'b'.repeat(1024 * 1024 + 1));
    hints = {
      prompt_file: ['prompt.txt', 'empty.txt', 'big.txt', 'dir', '/dev/zero', '/etc/hostname', 'missing.txt', '../../../../etc/passwd', '~/x'],
      cwd: [project, 'dir', '.', '/', '/nonexistent/dir', '..'],
      add_dirs: [project, 'dir', '/nonexistent', '.'],
      model: ['deepseek/deepseek-v4-flash-0731', 'openai/gpt-5', 'qwen/qwen3-coder', 'deepseek/no-such-model', 'DEEPSEEK/DEEPSEEK-V4-FLASH-0731'],
      job_id: ['job_20260101T000000Z_nosuch', '../../config/settings', '.', '..', 'job_'],
      session_id: ['00000000-0000-0000-0000-000000000000', 'no-such-session'],
      filter: ['deepseek', 'qwen coder', 'free', '*', ' ', 'ü'],
      allowed_tools: ['Read', 'Bash(npm test:*)', 'Grep'],
    };
    service = await startFuzzService(env);
    transport = new QueuedStdioClientTransport({ command: process.execPath, args: [BRIDGE], env: env as Record<string, string>, cwd: project, stderr: 'pipe' });
    transport.stderr?.on('data', (chunk: Buffer) => {
      bridgeLog += chunk.toString('utf8');
      if (bridgeLog.length > 2_000_000) bridgeLog = bridgeLog.slice(-1_000_000);
    });
    client = new Client({ name: 'fuzz', version: '1.0.0' });
    await client.connect(transport);
  }, 60_000);

  afterAll(async () => {
    process.off('warning', onWarning);
    await client?.close();
    await service?.stop();
    await fake.stop();
    await cleanup();
  });

  it(`answers ${TARGET_CALLS}+ schema-generated tool calls with well-formed results, starting nothing`, async ({ onTestFailed }) => {
    onTestFailed(() => console.error(reproduceHint(SEED, FILE)));
    const rng = new Rng(SEED).fork('bridge-calls');
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(0);
    const schemas = new Map(tools.map((t) => [t.name, t.inputSchema as JsonSchema]));
    const names = [...schemas.keys()];
    const bridgePid = transport.pid as number;

    const plan: Planned[] = [];
    while (plan.length < TARGET_CALLS) {
      const tool = rng.pick(names);
      const schema = schemas.get(tool) as JsonSchema;
      const kind = rng.weighted<string>([
        [55, 'valid'],
        [37, 'invalid'],
        [6, 'mutated'],
        [2, 'unknown-tool'],
      ]);
      if (kind === 'unknown-tool') {
        const name = rng.chance(0.5)
          ? rng.pick(['delegate', 'delegate_start ', 'DELEGATE_START', 'openrouter_model', '', '__proto__', 'toString'])
          : randomString(rng, 30);
        if (!schemas.has(name)) plan.push({ tool: name, args: {}, verdict: 'unknown-tool' });
        continue;
      }
      let args: unknown =
        kind === 'valid'
          ? generateValid(rng, schema, hints)
          : kind === 'invalid'
            ? generateInvalid(rng, schema, hints)
            : mutateJson(rng, generateValid(rng, schema, hints));
      if (kind === 'valid' && tool === 'delegate_start' && isRecord(args) && rng.chance(0.5)) args = plausibleStart(rng, args);
      // MCP arguments are an object; a non-object goes in under one key, which the schema judges like any other.
      if (!isRecord(args)) args = { value: args };
      plan.push({ tool, args: args as Record<string, unknown>, verdict: judge(schema, args) });
    }

    const problems: string[] = [];
    const stats = { calls: 0, isError: 0, ok: 0, byVerdict: new Map<string, number>(), errors: new Map<string, number>(), argBytes: 0 };
    const say = (call: Planned, what: string) => problems.push(`${call.tool} ${JSON.stringify(call.args).slice(0, 300)} (${call.verdict}): ${what}`);
    const memoryBefore = { service: await procMemory(service.pid), bridge: await procMemory(bridgePid) };

    const check = async (call: Planned): Promise<void> => {
      stats.calls++;
      stats.byVerdict.set(call.verdict, (stats.byVerdict.get(call.verdict) ?? 0) + 1);
      stats.argBytes += JSON.stringify(call.args).length;
      let result;
      try {
        result = await client.callTool({ name: call.tool, arguments: call.args }, undefined, { timeout: HANG_MS });
      } catch (error) {
        say(call, `the call failed instead of answering: ${(error as Error).message.slice(0, 300)}`);
        return;
      }
      const content = Array.isArray(result.content) ? (result.content as Array<{ type: string; text?: unknown }>) : [];
      const texts = content.filter((c) => c.type === 'text' && typeof c.text === 'string').map((c) => c.text as string);
      const text = texts.join('\n');
      if (content.length === 0 || texts.length !== content.length || texts.some((t) => t.trim() === '')) {
        say(call, `content must be non-empty text items: ${JSON.stringify(result.content).slice(0, 300)}`);
      }
      const breakage = BREAKAGE.find((pattern) => pattern.test(text));
      if (breakage) say(call, `a "something broke" answer: ${text.slice(0, 400)}`);
      if (result.isError === true) {
        stats.isError++;
        const kind = errorKind(text);
        stats.errors.set(kind, (stats.errors.get(kind) ?? 0) + 1);
        if (text.trim().length < 15) say(call, `an error result without an explanation: ${JSON.stringify(text)}`);
        if (call.verdict === 'valid' && SCHEMA_REFUSAL.test(text)) say(call, `arguments the advertised schema accepts were refused: ${text.slice(0, 400)}`);
        if (call.verdict === 'unknown-tool' && !/not found|disabled/.test(text))
          say(call, `an unknown tool should be reported as not found: ${text.slice(0, 300)}`);
        return;
      }
      stats.ok++;
      if (call.verdict === 'invalid') say(call, `arguments the advertised schema refuses were accepted: ${text.slice(0, 200)}`);
      if (call.verdict === 'unknown-tool') say(call, 'an unknown tool answered without an error');
      if (NEEDS_A_JOB.has(call.tool)) say(call, `succeeded although no job can exist (was something started?): ${text.slice(0, 300)}`);
      // The record comes back only when asked for (`detail: true`); the short text is all otherwise.
      const schema = STRUCTURED[call.tool];
      if (call.args.detail !== true && result.structuredContent !== undefined) say(call, 'structured content without detail: true');
      // A record too long for one answer is left out, and the text says so (render/answer-size.ts, withRecord).
      const recordLeftOut = result.structuredContent === undefined && /\(The record is [\d,]+ characters as JSON/.test(text);
      if (schema && call.args.detail === true && !recordLeftOut && !schema.safeParse(result.structuredContent).success)
        say(call, `structured content outside the contract: ${JSON.stringify(result.structuredContent).slice(0, 300)}`);
    };

    const spawned: string[] = [];
    for (let start = 0; start < plan.length; start += BATCH) {
      const batch = plan.slice(start, start + BATCH);
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let call = batch[next++]; call; call = batch[next++]) await check(call);
        }),
      );
      for (const pid of [service.pid, bridgePid]) for (const child of await descendants(pid)) spawned.push(`${child.pid} ${child.cmdline}`);
    }
    const memoryAfter = { service: await procMemory(service.pid), bridge: await procMemory(bridgePid) };

    // Both still up and answering; nothing was started.
    const again = await client.listTools();
    expect(again.tools.map((t) => t.name).sort()).toEqual([...names].sort());
    const models = await client.callTool({ name: 'openrouter_models', arguments: { limit: 3 } });
    expect(models.isError, JSON.stringify(models.content).slice(0, 500)).not.toBe(true);
    expect(service.exited(), service.log().slice(-2000)).toBe(false);
    const ipc = await IpcClient.connect({ locations: service.locations, clientName: 'fuzz/check' });
    try {
      expect((await ipc.call('service.status', {})).pid).toBe(service.pid);
      expect((await ipc.call('jobs.list', { limit: 1 })).totalJobs, 'jobs were recorded').toBe(0);
    } finally {
      ipc.close();
    }
    expect(await jobFolders(service.locations), 'job folders were created').toEqual([]);
    expect(spawned, 'a process was spawned by the service or the bridge').toEqual([]);
    if (/uncaught|unhandled/i.test(service.log() + bridgeLog)) problems.push(`an uncaught error was logged:\n${(service.log() + bridgeLog).slice(-3000)}`);

    console.log(
      `[fuzz bridge] seed ${SEED}: ${stats.calls} calls (${[...stats.byVerdict].map(([v, n]) => `${n} ${v}`).join(', ')}), ` +
        `${(stats.argBytes / 1024 / 1024).toFixed(1)} MiB of arguments; ${stats.ok} results, ${stats.isError} error results ` +
        `(${[...stats.errors]
          .sort((a, b) => b[1] - a[1])
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')}); ` +
        `RSS service ${memoryBefore.service.rssMiB.toFixed(0)} → ${memoryAfter.service.rssMiB.toFixed(0)} MiB (peak ${memoryAfter.service.peakRssMiB.toFixed(0)}), ` +
        `bridge ${memoryBefore.bridge.rssMiB.toFixed(0)} → ${memoryAfter.bridge.rssMiB.toFixed(0)} MiB (peak ${memoryAfter.bridge.peakRssMiB.toFixed(0)})`,
    );
    expect(stats.calls).toBeGreaterThanOrEqual(TARGET_CALLS);
    // Sixteen calls at once fill the bridge's stdin: the client waits for 'drain' once, not once per call.
    expect(listenerWarnings).toEqual([]);
    expect(problems.slice(0, MAX_PROBLEMS), `${problems.length} problem(s); ${reproduceHint(SEED, FILE)}`).toEqual([]);
  }, 150_000);
});
