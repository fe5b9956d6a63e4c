/**
 * What the pinned Claude Code really sends to the metering gateway, captured: the real `claude` as a delegate of
 * the real service (built), against the fake OpenRouter playing the model from scripts (tests/support), in the
 * scenarios a delegate goes through — a plain answer and a follow-up, every file tool, an image and a PDF read, a
 * sub-agent, deferred tools loaded with ToolSearch, WebSearch and WebFetch, thinking blocks handed back, thinking
 * turned off and given a budget in the delegates' Claude Code settings, and `/compact`. Each request body is reduced
 * to its shape (field names, block and source types, tool names and types; every other string emptied, tool inputs
 * and schemas dropped), and the shapes are written to tests/fixtures/claude/request-shapes-<version>.json with a
 * summary. Beside them, under `headers` and `stringLengths` (scripts/live/request-record.ts): every request header's
 * name, the whole values of `anthropic-beta` (each value), `anthropic-version`, `content-type` and `accept`, the
 * shapes of `user-agent`, `x-app`, `x-claude-code-session-id` and `x-stainless-*` (digits as `#`, ids as `<session>`,
 * `<uuid>`, `<id>`), each with the scenarios it came from; and the longest UTF-8 string seen at each path of the
 * body (`messages[].content[type=tool_use].id`). No prompt, key or id is kept.
 *
 * The headers are recorded at the gateway's door, not at the fake: the fake sees what the gateway forwards, and once
 * the gateway passes only an allowlist (src-main/core/gateway/http/gateway-headers.ts), that is the allowlist, not what
 * Claude Code sent. So the service runs a launcher (scripts/live/claude-door.ts) that points each delegate's
 * ANTHROPIC_BASE_URL at a recording door in front of the gateway, which passes every request on unchanged. The bodies'
 * lengths come from the door too; the shapes, as before, from what reached the fake (the same bytes: with no
 * provider policy or fallback model the gateway forwards the body it was sent).
 *
 * src-main/core/gateway/request/request-fields.ts lets through what this file shows, and tests/core/gateway/request/request-fields.test.ts
 * holds it to every shape in it; gateway-headers.ts lets through the headers and beta values it shows, and
 * tests/core/gateway/http/gateway-headers.test.ts holds the two together. Nothing in CI runs this: run it by hand when the
 * Claude Code pin moves, look at what changed (git diff), and widen an allowlist only for what the new CLI really sends.
 *
 *   npm run build && npx tsx scripts/capture-claude-requests.ts [--out FILE] [--raw DIR] [--only plain,web,…]
 *
 * `--raw DIR` also writes every request whole (prompts, headers and the job's token) to DIR, to look at by hand;
 * never commit them. Needs `openssl` (the https page WebFetch reads has a certificate of its own). About ten minutes.
 *
 * The delegate's requests go through the gateway, with server tools allowed (`gateway.allowServerTools`) and no
 * provider policy or fallback model, so every field Claude Code sends reaches the fake as sent. A field or block the
 * gateway refuses never arrives: the script then names the scenario whose job failed or whose requests lack what it
 * was written to show, so a refusal is seen rather than silently missing from the shapes.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { JobView, PermissionMode, DelegateProfile } from '../src-main/contract/index.js';
import { ClaudeDoor } from './live/claude-door.js';
import { RequestRecorder } from './live/request-record.js';
import type { SentRequest } from './live/request-record.js';
import { CLAUDE_CLI, COUNT_TOKENS_PATH, MESSAGES_PATH, ScriptedModel } from '../tests/support/fake-anthropic.js';
import type { ScriptStep } from '../tests/support/fake-anthropic.js';
import { FaultWorld } from '../tests/support/faults.js';
import { ROOT } from '../tests/support/built.js';

const m = ScriptedModel.marker;

/** A 1×1 PNG: Read turns an image file into an image block of a tool result. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64');
/** A one-page PDF with a line of text. */
const PDF = onePagePdf('capture');

interface Scenario {
  name: string;
  /** What it exercises, as the fixture says it. */
  what: string;
  profile: DelegateProfile;
  permissionMode?: PermissionMode;
  allowedTools?: string[];
  /** The main script; `project` is the delegate's folder, `page` an https URL WebFetch can fetch. */
  steps: (project: string, page: string) => ScriptStep[];
  /** More scripts the main one starts (a sub-agent's prompt carries its own marker). */
  scripts?: Record<string, ScriptStep[]>;
  /** Written into the project (or, with a leading `claude-config/`, into the delegates' own Claude Code config) first. */
  files?: Record<string, Buffer | string>;
  /** A follow-up turn with this prompt (without a marker the script goes on). */
  followup?: string;
  /** Features (see `featuresOf`) its requests must show, or the run says the scenario missed. */
  shows: string[];
}

const SCENARIOS: Scenario[] = [
  {
    name: 'plain',
    what: 'a text answer, then a follow-up turn (--resume), lean profile',
    profile: 'lean',
    steps: () => [{ text: 'Hello.' }, { text: 'Again.' }],
    followup: 'And once more.',
    shows: ['field:thinking'],
  },
  {
    name: 'minimal',
    what: 'a text answer with the minimal profile (--bare)',
    profile: 'minimal',
    steps: () => [{ text: 'Hello.' }],
    shows: [],
  },
  {
    name: 'file-tools',
    what: 'Bash, Write, Read, Edit, Glob, Grep, a failing Read (is_error) and two parallel calls, lean profile',
    profile: 'lean',
    allowedTools: ['Bash'],
    steps: (project) => [
      { toolUse: { name: 'Bash', input: { command: 'echo one > one.txt', description: 'Write a file' } } },
      { toolUse: { name: 'Write', input: { file_path: path.join(project, 'two.txt'), content: 'two\n' } } },
      { toolUse: { name: 'Read', input: { file_path: path.join(project, 'two.txt') } } },
      { toolUse: { name: 'Edit', input: { file_path: path.join(project, 'two.txt'), old_string: 'two', new_string: 'three' } } },
      { toolUse: { name: 'Glob', input: { pattern: '*.txt' } } },
      { toolUse: { name: 'Grep', input: { pattern: 'three', path: project } } },
      { toolUse: { name: 'Read', input: { file_path: path.join(project, 'missing.txt') } } },
      {
        text: 'Both at once.',
        toolUse: [
          { name: 'Read', input: { file_path: path.join(project, 'one.txt') } },
          { name: 'Read', input: { file_path: path.join(project, 'two.txt') } },
        ],
      },
      { text: 'Done with the files.' },
    ],
    shows: ['block:tool_use', 'block:tool_result', 'tool_result:is_error'],
  },
  {
    name: 'image-and-pdf',
    what: 'Read of a PNG and of a PDF, lean profile',
    profile: 'lean',
    files: { 'dot.png': PNG, 'page.pdf': PDF },
    steps: (project) => [
      { toolUse: { name: 'Read', input: { file_path: path.join(project, 'dot.png') } } },
      { toolUse: { name: 'Read', input: { file_path: path.join(project, 'page.pdf') } } },
      { text: 'Seen.' },
    ],
    shows: ['block:image'],
  },
  {
    name: 'thinking',
    what: "thinking blocks in the model's answers, handed back by Claude Code on the next turn, lean profile",
    profile: 'lean',
    allowedTools: ['Bash'],
    steps: () => [
      { thinking: 'Let me look.', toolUse: { name: 'Bash', input: { command: 'echo thought', description: 'Think' } } },
      { thinking: 'That is enough.', text: 'Thought about it.' },
    ],
    shows: ['block:thinking'],
  },
  {
    name: 'thinking-budget',
    what: 'MAX_THINKING_TOKENS set in the delegates’ Claude Code settings (env), lean profile',
    profile: 'lean',
    files: { 'claude-config/settings.json': JSON.stringify({ env: { MAX_THINKING_TOKENS: '2048' } }) },
    steps: () => [{ text: 'Hello.' }],
    shows: ['field:thinking'],
  },
  {
    name: 'subagent',
    what: 'the Agent tool starting a sub-agent that reads a file, full profile',
    profile: 'full',
    allowedTools: ['Agent', 'Read'],
    files: { 'note.txt': 'a note\n' },
    steps: () => [
      {
        toolUse: {
          name: 'Agent',
          input: { description: 'Read the note', prompt: `${m('capture-inner-agent')} Read note.txt and say what it holds.`, subagent_type: 'general-purpose' },
        },
      },
      { text: 'The sub-agent is done.' },
    ],
    scripts: {
      'capture-inner-agent': [{ toolUse: { name: 'Read', input: { file_path: 'note.txt' } } }, { text: 'It holds a note.' }],
    },
    shows: ['block:tool_result'],
  },
  {
    name: 'web',
    what:
      'ToolSearch loading the deferred WebSearch and WebFetch, then both used (WebSearch asks the model with a server tool; WebFetch fetches a page ' +
      'itself and asks the model to read it), full profile',
    profile: 'full',
    allowedTools: ['ToolSearch', 'WebSearch', 'WebFetch'],
    // WebFetch asks claude.ai whether a domain may be fetched first; the fake's 127.0.0.1 is not on the internet.
    files: { 'claude-config/settings.json': JSON.stringify({ skipWebFetchPreflight: true }) },
    steps: (_project, page) => [
      { toolUse: { name: 'ToolSearch', input: { query: 'select:WebSearch,WebFetch' } } },
      { toolUse: { name: 'WebSearch', input: { query: 'openrouter delegate capture' } } },
      { toolUse: { name: 'WebFetch', input: { url: page, prompt: 'What does the page say?' } } },
      { text: 'Searched and fetched.' },
    ],
    shows: ['block:tool_reference', 'tool:web_search_20250305'],
  },
  {
    name: 'compaction',
    what: 'a follow-up turn of `/compact`: Claude Code asks the model for a summary of the conversation, lean profile',
    profile: 'lean',
    allowedTools: ['Bash'],
    steps: () => [
      { toolUse: { name: 'Bash', input: { command: 'echo before', description: 'Do something' } } },
      { text: 'Did something.' },
      { text: 'Summary of the conversation so far: a command was run.' },
      { text: 'Carried on after the summary.' },
    ],
    followup: '/compact',
    shows: [],
  },
  {
    name: 'thinking-off',
    what: 'alwaysThinkingEnabled: false in the delegates’ Claude Code settings, lean profile',
    profile: 'lean',
    files: { 'claude-config/settings.json': JSON.stringify({ alwaysThinkingEnabled: false }) },
    steps: () => [{ text: 'Hello.' }],
    shows: [],
  },
];

/** Strings kept as they are: names of types and roles, tool names, small enumerations; every other string is emptied. */
const KEPT_STRINGS = new Set(['type', 'role', 'media_type', 'name', 'effort', 'display', 'keep', 'ttl']);
/** Free-form objects whose content is the tool's, not the request's shape. */
const DROPPED_OBJECTS = new Set(['input', 'input_schema']);

/** A body reduced to its shape: keys sorted, strings emptied (but KEPT_STRINGS), arrays without repeated shapes. */
export function skeleton(value: unknown, key = ''): unknown {
  if (typeof value === 'string') return KEPT_STRINGS.has(key) ? value : '';
  if (Array.isArray(value)) {
    const seen = new Map<string, unknown>();
    for (const entry of value) {
      const shape = skeleton(entry);
      seen.set(JSON.stringify(shape), shape);
    }
    return [...seen.values()];
  }
  if (value !== null && typeof value === 'object') {
    if (DROPPED_OBJECTS.has(key)) return {};
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, skeleton((value as Record<string, unknown>)[k], k)]),
    );
  }
  return value;
}

type Body = Record<string, unknown>;

function objects(value: unknown): Body[] {
  return Array.isArray(value) ? value.filter((v): v is Body => v !== null && typeof v === 'object' && !Array.isArray(v)) : [];
}

/** Every content block of a body with where it sits: `messages.<role>`, `system`, `tool_result`. */
function blocksOf(body: Body): Array<{ where: string; block: Body }> {
  const found: Array<{ where: string; block: Body }> = [];
  for (const block of objects(body.system)) found.push({ where: 'system', block });
  for (const message of objects(body.messages)) {
    for (const block of objects(message.content)) {
      found.push({ where: `messages.${String(message.role)}`, block });
      for (const inner of objects(block.content)) found.push({ where: `${String(block.type)}.content`, block: inner });
    }
  }
  return found;
}

/** Short names of what a body shows, for the scenarios' checks: `field:thinking`, `block:image`, `tool:ToolSearch`, … */
function featuresOf(body: Body): Set<string> {
  const features = new Set<string>(Object.keys(body).map((k) => `field:${k}`));
  for (const { block } of blocksOf(body)) {
    features.add(`block:${String(block.type)}`);
    if (block.type === 'tool_result' && block.is_error === true) features.add('tool_result:is_error');
  }
  for (const tool of objects(body.tools)) features.add(`tool:${String(tool.type ?? tool.name)}`);
  return features;
}

function union(into: Map<string, Set<string>>, name: string, values: Iterable<string>): void {
  const set = into.get(name) ?? new Set<string>();
  for (const value of values) set.add(value);
  into.set(name, set);
}

function sorted(map: Map<string, Set<string>>): Record<string, string[]> {
  return Object.fromEntries([...map.keys()].sort().map((k) => [k, [...(map.get(k) ?? [])].sort()]));
}

/** What the shapes of one path hold, for a person: fields, the keys of object fields, blocks by place and type, sources, tools. */
function summarise(bodies: Body[]): Record<string, unknown> {
  const fields = new Map<string, Set<string>>();
  const objectKeys = new Map<string, Set<string>>();
  const blocks = new Map<string, Set<string>>();
  const values = new Map<string, Set<string>>();
  const toolKeys = new Set<string>();
  const toolNames = new Set<string>();
  const serverTools = new Map<string, Set<string>>();
  for (const body of bodies) {
    for (const [key, value] of Object.entries(body)) {
      union(fields, key, [Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value]);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) union(objectKeys, key, Object.keys(value));
    }
    for (const edit of objects((body.context_management as Body | undefined)?.edits)) union(objectKeys, 'context_management.edits[]', Object.keys(edit));
    for (const [name, value] of [
      ['thinking.type', (body.thinking as Body | undefined)?.type],
      ['output_config.effort', (body.output_config as Body | undefined)?.effort],
      ['stream', body.stream],
    ] as const) {
      if (value !== undefined) union(values, name, [String(value)]);
    }
    for (const edit of objects((body.context_management as Body | undefined)?.edits)) union(values, 'context_management.edits[].type', [String(edit.type)]);
    for (const message of objects(body.messages)) {
      union(values, 'messages[].role', [String(message.role)]);
      union(values, `messages[].content (${String(message.role)})`, [typeof message.content === 'string' ? 'string' : 'array']);
    }
    for (const { where, block } of blocksOf(body)) {
      union(blocks, `${where}: ${String(block.type)}`, Object.keys(block));
      const source = block.source as Body | undefined;
      if (source) union(values, `${String(block.type)}.source.type`, [String(source.type)]);
      if (source) union(objectKeys, `${String(block.type)}.source (${String(source.type)})`, Object.keys(source));
      const cache = block.cache_control as Body | undefined;
      if (cache) union(objectKeys, 'cache_control', Object.keys(cache));
    }
    for (const tool of objects(body.tools)) {
      if (tool.type !== undefined) {
        union(serverTools, String(tool.type), Object.keys(tool));
        continue;
      }
      for (const key of Object.keys(tool)) toolKeys.add(key);
      if (typeof tool.name === 'string') toolNames.add(tool.name);
    }
  }
  return {
    requests: bodies.length,
    fields: sorted(fields),
    objectKeys: sorted(objectKeys),
    values: sorted(values),
    blocks: sorted(blocks),
    tools: { keys: [...toolKeys].sort(), names: [...toolNames].sort(), serverTools: sorted(serverTools) },
  };
}

interface Captured {
  scenario: string;
  path: string;
  body: Body;
}

/** An https page on 127.0.0.1 for WebFetch (which turns http into https), with a certificate of its own the delegates trust. */
async function startPage(): Promise<{ url: string; caFile: string; close: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ord-capture-tls-'));
  const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'].concat([
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]),
    { stdio: 'ignore' },
  );
  const server = https.createServer({ key: await readFile(key), cert: await readFile(cert) }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html><body><h1>Capture</h1><p>A page for WebFetch.</p></body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/page`,
    caFile: cert,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Where a scenario's delegates reach the gateway through: the door, and the launcher that points them at it. */
interface Door {
  door: ClaudeDoor;
  launcher: string;
}

/** A POST to a path the gateway serves: as the gateway sees it (`/v1/messages`) or as the fake does (`/api/v1/messages`). */
const isMessagesPost = (r: { method: string; path: string }) =>
  r.method === 'POST' && [MESSAGES_PATH, COUNT_TOKENS_PATH].includes(`/api${r.path.replace(/^\/api/, '')}`);

async function runScenario(
  scenario: Scenario,
  page: { url: string; caFile: string },
  door: Door,
  raw: string | null,
): Promise<{ captured: Captured[]; sent: SentRequest[]; problems: string[] }> {
  const world = new FaultWorld();
  const problems: string[] = [];
  const firstAtDoor = door.door.requests.length;
  try {
    // The service passes NODE_EXTRA_CA_CERTS on to its delegates (child-env.ts), and runs the door's launcher as `claude`.
    // Server tools allowed: the capture must see what the CLI sends, not what the gateway lets through by default.
    await world.start(
      { delegateProfile: 'full', permissionCeiling: 'bypassPermissions', gateway: { allowServerTools: true } },
      { NODE_EXTRA_CA_CERTS: page.caFile, OPENROUTER_DELEGATE_CLAUDE: door.launcher },
    );
    for (const [file, content] of Object.entries(scenario.files ?? {})) {
      const target = file.startsWith('claude-config/') ? path.join(world.locations.data, file) : path.join(world.project, file);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, content);
    }
    world.model.script(`capture-${scenario.name}`, scenario.steps(world.project, page.url));
    for (const [name, steps] of Object.entries(scenario.scripts ?? {})) world.model.script(name, steps);
    await world.serve();
    const client = await world.connect();
    const started = await client.call('jobs.start', {
      prompt: `${m(`capture-${scenario.name}`)} Go.`,
      profile: scenario.profile,
      permissionMode: scenario.permissionMode ?? 'acceptEdits',
      ...(scenario.allowedTools ? { allowedTools: scenario.allowedTools } : {}),
      caller: { cwd: world.project },
    });
    const ends: JobView[] = [await world.waitForEnd(client, started.job.id)];
    if (scenario.followup && ends[0]?.job.state === 'succeeded') {
      const next = await client.call('jobs.followup', { jobId: started.job.id, prompt: scenario.followup, caller: { cwd: world.project } });
      ends.push(await world.waitForEnd(client, next.job.id));
    }
    for (const end of ends) {
      if (end.job.state !== 'succeeded') {
        const errors = end.tail.filter((e) => e.kind === 'notice' || e.isError === true).map((e) => e.text);
        problems.push(`job ${end.job.id} ended ${end.job.state}: ${end.job.endReason ?? ''} ${errors.join(' | ')}`.trim());
      }
    }
    const captured = world.fake.requests
      .filter(isMessagesPost)
      .map((r) => ({ scenario: scenario.name, path: r.path.replace(/^\/api/, ''), body: JSON.parse(r.body) as Body }));
    const features = new Set(captured.flatMap((c) => [...featuresOf(c.body)]));
    for (const wanted of scenario.shows) if (!features.has(wanted)) problems.push(`no request showed ${wanted}`);
    const atDoor = door.door.requests.slice(firstAtDoor).filter(isMessagesPost);
    // Each request the gateway let through reached the fake; one it refused did not (and the job then says so).
    if (atDoor.length !== captured.length) problems.push(`${atDoor.length} requests reached the gateway, ${captured.length} the fake`);
    const sessionIds = ends.map((end) => end.job.sessionId);
    const sent = atDoor.map((r) => ({ scenario: scenario.name, path: r.path, headers: r.headers, body: JSON.parse(r.body) as unknown, sessionIds }));
    if (raw) {
      await mkdir(raw, { recursive: true });
      await writeFile(path.join(raw, `${scenario.name}.json`), JSON.stringify(captured, null, 2));
      await writeFile(path.join(raw, `${scenario.name}.sent.json`), JSON.stringify(atDoor, null, 2));
    }
    return { captured, sent, problems };
  } finally {
    await world.stop();
  }
}

/** A valid one-page PDF (offsets in its cross-reference table computed), with `text` on the page. */
function onePagePdf(text: string): Buffer {
  const stream = `BT /F1 12 Tf 20 100 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(out.length);
    out += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** JSON indented by object, but with each list of strings or numbers on one line: a scenario list reads as one. */
function compactJson(value: unknown, indent: string): string {
  if (Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)) return `[${value.map((v) => JSON.stringify(v)).join(', ')}]`;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return JSON.stringify(value);
  const inner = `${indent}  `;
  const entries = Object.entries(value).map(([key, field]) => `${inner}${JSON.stringify(key)}: ${compactJson(field, inner)}`);
  return entries.length === 0 ? '{}' : `{\n${entries.join(',\n')}\n${indent}}`;
}

/**
 * The fixture as JSON a person can read: indented, but each shape on a line of its own (a diff then shows which
 * changed), and the headers' and lengths' lists on one line each.
 */
function formatted(fixture: { shapes: Record<string, unknown[]>; headers: unknown; stringLengths: unknown } & Record<string, unknown>): string {
  const text = JSON.stringify({ ...fixture, shapes: '@@shapes@@', headers: '@@headers@@', stringLengths: '@@stringLengths@@' }, null, 2);
  const shapes = Object.entries(fixture.shapes)
    .map(([where, list]) => `    ${JSON.stringify(where)}: [\n${list.map((shape) => `      ${JSON.stringify(shape)}`).join(',\n')}\n    ]`)
    .join(',\n');
  return `${text
    .replace('"@@shapes@@"', () => `{\n${shapes}\n  }`)
    .replace('"@@headers@@"', () => compactJson(fixture.headers, '  '))
    .replace('"@@stringLengths@@"', () => compactJson(fixture.stringLengths, '  '))}\n`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: 'string' }, raw: { type: 'string' }, only: { type: 'string' } } });
  const version = /^(\S+)/.exec(execFileSync(CLAUDE_CLI, ['--version'], { encoding: 'utf8' }))?.[1] ?? 'unknown';
  const out = values.out ?? path.join(ROOT, 'tests', 'fixtures', 'claude', `request-shapes-${version}.json`);
  const scenarios = values.only ? SCENARIOS.filter((s) => values.only?.split(',').includes(s.name)) : SCENARIOS;
  const captured: Captured[] = [];
  const sent = new RequestRecorder();
  const problems: string[] = [];
  const page = await startPage();
  const door = new ClaudeDoor();
  await door.start();
  const launcherDir = await mkdtemp(path.join(os.tmpdir(), 'ord-capture-door-'));
  try {
    const launcher = await door.writeLauncher(launcherDir, CLAUDE_CLI);
    for (const scenario of scenarios) {
      console.log(`${scenario.name}: ${scenario.what}`);
      const result = await runScenario(scenario, page, { door, launcher }, values.raw ?? null);
      console.log(`  ${result.captured.length} requests`);
      for (const problem of result.problems) console.log(`  ! ${problem}`);
      captured.push(...result.captured);
      for (const request of result.sent) sent.add(request);
      problems.push(...result.problems.map((p) => `${scenario.name}: ${p}`));
    }
  } finally {
    await page.close();
    await door.stop();
    await rm(launcherDir, { recursive: true, force: true });
  }
  const paths = [...new Set(captured.map((c) => c.path))].sort();
  const shapes: Record<string, Array<{ scenarios: string[]; body: unknown }>> = {};
  for (const where of paths) {
    const byShape = new Map<string, { scenarios: Set<string>; body: unknown }>();
    for (const c of captured.filter((x) => x.path === where)) {
      const body = skeleton(c.body);
      const key = JSON.stringify(body);
      const entry = byShape.get(key) ?? { scenarios: new Set<string>(), body };
      entry.scenarios.add(c.scenario);
      byShape.set(key, entry);
    }
    shapes[where] = [...byShape.values()].map((e) => ({ scenarios: [...e.scenarios].sort(), body: e.body }));
  }
  const fixture = {
    about:
      'OUR capture of what the pinned Claude Code sends to the metering gateway, made by scripts/capture-claude-requests.ts: ' +
      'the real CLI as a delegate of the real service, against the fake OpenRouter. Shapes only: strings other than types, roles ' +
      'and tool names are emptied, tool inputs and schemas dropped, repeated shapes in an array kept once. `headers`: what Claude Code ' +
      "sent, recorded at the gateway's door: every header name, the values of anthropic-beta (each), anthropic-version, content-type " +
      'and accept, the shapes of user-agent, x-app, x-claude-code-session-id and x-stainless-* (digits as #, ids as <session>, <uuid>, ' +
      '<id>), each with the scenarios it was seen in. `stringLengths`: the longest string (UTF-8 bytes) seen at each path of a body, ' +
      'array items as [] or [type=…], strings inside tool inputs and schemas together at .**.',
    cli: version,
    scenarios: Object.fromEntries(scenarios.map((s) => [s.name, s.what])),
    summary: Object.fromEntries(paths.map((where) => [where, summarise(captured.filter((c) => c.path === where).map((c) => c.body))])),
    shapes,
    headers: sent.headers(),
    stringLengths: sent.stringLengths(),
  };
  await writeFile(out, formatted(fixture));
  console.log(`\n${captured.length} requests, ${Object.values(shapes).flat().length} shapes: ${path.relative(ROOT, out)}`);
  if (problems.length > 0) {
    console.error(`\n${problems.length} scenario(s) did not go as scripted; look before you trust the file:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    process.exitCode = 1;
  }
}

await main();
