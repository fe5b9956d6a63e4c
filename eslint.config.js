// Layers by runtime (docs/ARCHITECTURE.md §9), said in lint rules:
//   contract  pure schemas and types: imports nothing of ours and no Node built-ins
//   common    pure helpers every layer may import (formatting, errors): the contract only, no Node built-ins
//   ipc       Node transport: the contract only
//   core      the service: never electron, never the CLI or the bridge
//   bridge    the contract and the ipc transport only, never core internals
//   renderer  the contract and common only
import js from '@eslint/js';
import svelte from 'eslint-plugin-svelte';
import tseslint from 'typescript-eslint';

const layer = (files, patterns) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns }] },
});

const electron = { group: ['electron', 'electron/*'], message: 'src-main/core and the transports never import electron (docs/ARCHITECTURE.md §9).' };
const core = { group: ['**/core/**', '**/core'], message: 'Only the contract and the ipc transport may be imported here, never core internals.' };
const cli = { group: ['**/cli/**'], message: 'The CLI is an entry point; nothing imports it.' };
const electronDir = { group: ['**/electron/**'], message: 'Only src-main/electron may use the Electron shell.' };
const bridge = { group: ['**/src-bridge/**'], message: 'Nothing imports the bridge.' };
const ipc = { group: ['**/ipc/**', '**/ipc'], message: 'The contract is pure; the renderer speaks the contract (and src-main/common) only.' };
const common = { group: ['**/common/**', '**/common'], message: 'The contract is wire only; it imports nothing of ours, not even src-main/common.' };
const ipcFromCommon = { group: ['**/ipc/**', '**/ipc'], message: 'src-main/common is pure: it imports the contract only (every layer, the renderer included, imports it).' };
const node = { group: ['node:*'], message: 'The contract is pure: no Node built-ins (the renderer imports it).' };

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
  layer(['src-main/contract/**'], [electron, core, cli, electronDir, bridge, ipc, node, common]),
  layer(['src-main/common/**'], [electron, core, cli, electronDir, bridge, ipcFromCommon, node]),
  layer(['src-main/ipc/**'], [electron, core, cli, electronDir, bridge]),
  layer(['src-main/core/**'], [electron, cli, electronDir, bridge]),
  layer(['src-bridge/**'], [electron, core, cli, electronDir]),
  layer(['src-renderer/**'], [electron, core, cli, electronDir, bridge, ipc, node]),
  {
    // Scripts, benches and tests are Node programs that print.
    files: ['scripts/**', 'bench/**', 'tests/**', '*.config.*'],
    rules: { 'no-console': 'off' },
  },
);
