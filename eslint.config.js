// Layers by runtime (docs/ARCHITECTURE.md §9), said in lint rules. Each folder may import:
//   src-main/contract  nothing of ours, no Node built-ins: pure schemas and types
//   src-main/common    the contract only, no Node built-ins: pure helpers (formatting, errors, days)
//   src-main/platform  contract, common; Node: where things live, which host runs the service
//   src-main/ipc       contract, common, platform: the transports (socket, loopback HTTP)
//   src-main/core      contract, common, platform: the service; never a transport, never electron
//   src-main/host      contract, common, platform, ipc, core: wires the service and its transports
//   src-main/cli       everything in src-main but the Electron shell: an entry point
//   src-main/electron  contract, common, platform, ipc, host (never core): the tray app
//   src-bridge         contract, common, platform, ipc: never core internals, never the host
//   src-renderer       contract, common
// Nothing imports cli, electron, the bridge or the renderer; tests, benches and scripts may import anything.
// And no import cycles anywhere in src-* (scripts/lint/import-cycles.mjs, types included), nor between two folders of
// src-main/core (CORE_LAYERS).
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import svelte from 'eslint-plugin-svelte';
import tseslint from 'typescript-eslint';
import { coreLayerZones } from './scripts/lint/core-layers.mjs';

// The folders of src-main/core, lowest first: each imports only the folders before it, so no two import each other
// (a file cycle check sees files, not folders). A folder not listed here fails the lint until it is placed (docs/ARCHITECTURE.md §9).
const CORE_LAYERS = ['fs', 'secrets', 'catalog', 'openrouter', 'settings', 'gateway', 'jobs', 'verify', 'setup', 'service'];
// core/jobs is rooms, one per reason to change, layered the same way (each room's README.md says what it owns and what
// it may import): a delegate's stream, its processes and box, money, the job's records, git (worktrees and taking work),
// the scoreboard, and the supervisor that puts them together.
const JOBS_LAYERS = ['stream', 'process', 'money', 'record', 'git', 'score', 'supervisor'];
// src-main/cli is two programs over shared support: openrouter-delegate's commands, and openrouter-mcp-config (config/,
// which shows the service's status as the status command does); their entry points lie beside the folders.
const CLI_LAYERS = ['support', 'commands', 'config'];
// core/gateway: the measure of a request, what it may carry, the wire; the listener and a request in flight lie beside.
const GATEWAY_LAYERS = ['measure', 'request', 'http'];

const layer = (files, patterns) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns }] },
});

const SEE = '(docs/ARCHITECTURE.md §9)';
// A regex, not a glob: the glob 'electron/*' would also match our own '../electron/…' files.
const electron = { regex: '^electron(/.*)?$', message: `Only src-main/electron imports electron ${SEE}.` };
const node = { group: ['node:*'], message: `Pure code: no Node built-ins here (the renderer imports it) ${SEE}.` };
const contractOnly = (where) => ({ group: ['**/common/**', '**/common'], message: `${where} imports nothing of ours ${SEE}.` });
const platform = (where) => ({ group: ['**/platform/**', '**/platform'], message: `${where} may not use platform (paths, processes) ${SEE}.` });
const ipc = (where) => ({ group: ['**/ipc/**', '**/ipc'], message: `${where} may not use a transport: the host attaches them ${SEE}.` });
const core = (where) => ({
  group: ['**/core/**', '**/core'],
  message: `${where} may not import the service core: go through src-main/host (its dispatcher and events) ${SEE}.`,
});
const host = (where) => ({ group: ['**/host/**', '**/host'], message: `${where} may not import the host: it wires the layers, nothing below uses it ${SEE}.` });
const cli = { group: ['**/cli/**', '**/cli'], message: `The CLI is an entry point; nothing imports it ${SEE}.` };
const electronDir = { group: ['**/electron/**'], message: `Only the tray app is the Electron shell; nothing imports it ${SEE}.` };
const bridge = { group: ['**/src-bridge/**'], message: `The bridge is an entry point; nothing imports it ${SEE}.` };
const renderer = { group: ['**/src-renderer/**'], message: `The settings page is built separately; nothing imports it ${SEE}.` };

export default tseslint.config(
  { ignores: ['dist/**', 'dist.building/**', 'node_modules/**', 'coverage/**', 'release/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  // Svelte components: parsed with TypeScript inside <script lang="ts">, and held to the renderer's layer below.
  ...svelte.configs.recommended,
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: tseslint.parser, extraFileExtensions: ['.svelte'] } },
    // svelte-check (TypeScript) knows the DOM's globals; ESLint's no-undef does not.
    // {' '} keeps a space Svelte would otherwise trim between an inline block and its text.
    rules: { 'no-undef': 'off', 'svelte/no-useless-mustaches': 'off' },
  },
  layer(
    ['src-main/contract/**'],
    [
      contractOnly('The contract'),
      platform('The contract'),
      ipc('The contract'),
      core('The contract'),
      host('The contract'),
      cli,
      electronDir,
      bridge,
      renderer,
      electron,
      node,
    ],
  ),
  layer(['src-main/common/**'], [platform('common'), ipc('common'), core('common'), host('common'), cli, electronDir, bridge, renderer, electron, node]),
  layer(['src-main/platform/**'], [ipc('platform'), core('platform'), host('platform'), cli, electronDir, bridge, renderer, electron]),
  layer(['src-main/ipc/**'], [core('ipc'), host('ipc'), cli, electronDir, bridge, renderer, electron]),
  layer(['src-main/core/**'], [ipc('The core'), host('The core'), cli, electronDir, bridge, renderer, electron]),
  layer(['src-main/host/**'], [cli, electronDir, bridge, renderer, electron]),
  layer(['src-main/cli/**'], [electronDir, bridge, renderer, electron]),
  layer(['src-main/electron/**'], [core('The tray app'), cli, bridge, renderer]),
  layer(['src-bridge/**'], [core('The bridge'), host('The bridge'), cli, electronDir, renderer, electron]),
  layer(
    ['src-renderer/**'],
    [platform('The settings page'), ipc('The settings page'), core('The settings page'), host('The settings page'), cli, electronDir, bridge, electron, node],
  ),
  {
    // How import-x reads the product's imports, for the zones below. Cycles are refused by scripts/lint/import-cycles.mjs
    // (in `npm run lint`), which sees type imports too: import-x/no-cycle, a subset of it, took 43% of this lint's rule time.
    files: ['src-main/**/*.ts', 'src-bridge/**/*.ts', 'src-renderer/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // The dependency graph is read from TypeScript sources, parsed as ESLint parses them.
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      // Sources import each other as .js (what the build emits); the resolver finds the .ts behind it.
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'], extensionAlias: { '.js': ['.ts', '.js'] } })],
    },
  },
  {
    // Between core's folders, between core/jobs's rooms and between cli's, one direction only: the order of CORE_LAYERS,
    // JOBS_LAYERS, CLI_LAYERS and GATEWAY_LAYERS (resolved by the settings above).
    files: ['src-main/core/**/*.ts', 'src-main/cli/**/*.ts'],
    plugins: { 'import-x': importX },
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            ...coreLayerZones(fileURLToPath(new URL('src-main/core', import.meta.url)), CORE_LAYERS),
            ...coreLayerZones(fileURLToPath(new URL('src-main/core/jobs', import.meta.url)), JOBS_LAYERS, 'JOBS_LAYERS in eslint.config.js'),
            ...coreLayerZones(fileURLToPath(new URL('src-main/cli', import.meta.url)), CLI_LAYERS, 'CLI_LAYERS in eslint.config.js', { rootFiles: true }),
            ...coreLayerZones(fileURLToPath(new URL('src-main/core/gateway', import.meta.url)), GATEWAY_LAYERS, 'GATEWAY_LAYERS in eslint.config.js', {
              rootFiles: true,
            }),
          ],
        },
      ],
    },
  },
  {
    // Pieces a newcomer can read whole (issue 25): a product file says one thing in at most 450 lines, a function in 80.
    files: ['src-main/**/*.ts', 'src-bridge/**/*.ts', 'src-renderer/**/*.ts', 'src-renderer/**/*.svelte'],
    rules: { 'max-lines': ['error', { max: 450 }], 'max-lines-per-function': ['error', { max: 80 }] },
  },
  {
    // Scripts, benches and tests are Node programs that print.
    files: ['scripts/**', 'bench/**', 'tests/**', '*.config.*'],
    rules: { 'no-console': 'off' },
  },
  {
    // Test files share their worker's modules (vitest.config.ts, isolate: false): a module mocked in one file would
    // not reach code another file had already loaded, and would reach the files after it. Spy on an object instead.
    files: ['tests/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['mock', 'doMock', 'unmock', 'doUnmock'].map((property) => ({
          object: 'vi',
          property,
          message: 'Test files share their modules (vitest.config.ts): spy on an object (vi.spyOn) instead of mocking a module.',
        })),
      ],
    },
  },
);
