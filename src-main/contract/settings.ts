/**
 * The user's settings (docs/ARCHITECTURE.md §5). The schema is the single source of truth for
 * defaults and validation: the service, the CLI and the settings window all parse with it.
 *
 * Split by area; import from here (or the contract's index), not from the parts:
 * - settings-modes.ts: the delegation, permission, profile and isolation modes, with their words;
 * - settings-policy.ts: the numeric bounds and the groups (budgets, provider, gateway, sandbox);
 * - settings-schema.ts: the settings object (models, tools, limits), its cross-field rules, patches and defaults;
 * - settings-meta.ts: each setting's label, help and default, and settings named by path.
 */
export * from './settings-modes.js';
export * from './settings-policy.js';
export * from './settings-schema.js';
export * from './settings-meta.js';
