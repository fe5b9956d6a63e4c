/**
 * The settings that are objects of their own (docs/ARCHITECTURE.md §5): the budgets, the provider policy, what the
 * gateway lets through and the sandbox; and the bounds of every numeric setting.
 */
import { z } from 'zod';

/**
 * Inclusive bounds of the numeric settings. The schemas are built from them (here and in settings-schema.ts) and
 * SETTING_META (settings-meta.ts) hands them to every surface, so "1–32" is written here and nowhere else.
 */
export const SETTING_BOUNDS = {
  usd: { min: 0 },
  /** A job's cap: $0 would start a delegate that cannot make a single request (mode `off` is how to stop delegating). */
  jobUsd: { min: 0.01 },
  minContext: { min: 1 },
  concurrency: { min: 1, max: 32 },
  jobTimeoutMinutes: { min: 1, max: 24 * 60 },
  retentionDays: { min: 1, max: 3650 },
  modelsCacheTtlMinutes: { min: 1, max: 7 * 24 * 60 },
  delegateMaxRetries: { min: 0, max: 10 },
  fanOutLimit: { min: 2, max: 5 },
  verifyTimeoutMinutes: { min: 1, max: 240 },
  verifyConcurrency: { min: 1, max: 16 },
  fixRounds: { min: 0, max: 3 },
  inlineAnswerChars: { min: 0, max: 20_000 },
} as const satisfies Record<string, SettingBounds>;

/** Inclusive; no `max` means no upper bound. */
export interface SettingBounds {
  min: number;
  max?: number;
}

const usd = z.number().finite().min(SETTING_BOUNDS.usd.min);

const budgetsShape = {
  /** Ceiling for one job's `max_cost_usd`, and its default. */
  perJobUsd: z
    .number()
    .finite()
    .min(
      SETTING_BOUNDS.jobUsd.min,
      `must be at least $${SETTING_BOUNDS.jobUsd.min}: a job with no budget cannot make a single request (to stop delegating, set the mode to off)`,
    )
    .default(0.5),
  /** Spend across all jobs in one local day. */
  perDayUsd: usd.default(5),
  /** No job starts when the key's remaining balance is below this. */
  reserveUsd: usd.default(0.5),
};
export const BudgetsSchema = z.object(budgetsShape).strict();

/**
 * OpenRouter's provider routing (https://openrouter.ai/docs/features/provider-routing): which provider may serve
 * a delegate's requests. Every default is OpenRouter's own, so a setting left at its default sends nothing.
 */
export const DATA_COLLECTION = ['allow', 'deny'] as const;
export const PROVIDER_SORTS = ['none', 'price', 'throughput', 'latency'] as const;
export type ProviderSort = (typeof PROVIDER_SORTS)[number];

/** A provider as OpenRouter names it in `only`/`ignore` (a slug such as "anthropic" or "deepinfra/turbo"). */
export const ProviderNameSchema = z
  .string()
  .trim()
  // Control characters would only hide a name in every list that shows it; OpenRouter's slugs have none.
  .regex(/^[^\p{Cc}]{1,100}$/u, 'expected a provider name like "anthropic" or "deepinfra/turbo" (at most 100 characters, no control characters)');

/** Fifty is more providers than any model has; the cap keeps a pasted list from growing every request. */
const providerList = z.array(ProviderNameSchema).max(50);

const providerShape = {
  /** 'deny': only providers that neither store prompts nor train on them. */
  dataCollection: z.enum(DATA_COLLECTION).default('allow'),
  /** Only zero-data-retention endpoints. */
  zdr: z.boolean().default(false),
  /** 'none' leaves OpenRouter's own balance of price and uptime. */
  sort: z.enum(PROVIDER_SORTS).default('none'),
  /** Empty = any provider. */
  only: providerList.default([]),
  ignore: providerList.default([]),
  /** false: when the providers allowed are down, the request fails instead of going elsewhere. */
  allowFallbacks: z.boolean().default(true),
};
export const ProviderPolicySchema = z.object(providerShape).strict();
export type ProviderPolicy = z.infer<typeof ProviderPolicySchema>;

/**
 * What the metering gateway lets a delegate's request carry beyond what Claude Code sends for its own tools
 * (src-main/core/gateway/request/request-fields.ts). Off: only what the job's cap can price.
 */
const gatewayShape = {
  /**
   * Server tools (web search, web fetch, code execution: run by OpenRouter or the provider, billed per use) and
   * documents or images given by URL (fetched and parsed upstream): fees outside token prices, which no cap sees.
   */
  allowServerTools: z.boolean().default(false),
};
export const GatewayPolicySchema = z.object(gatewayShape).strict();
export type GatewayPolicy = z.infer<typeof GatewayPolicySchema>;

/**
 * How a delegate may run programs (its Bash tool, and everything that starts), and the box it runs in: the Anthropic
 * sandbox runtime around the whole delegate (bubblewrap and socat on Linux, Seatbelt on macOS; docs/ISOLATION.md
 * "The box"). Inside it nothing writes but the job's folders and a private temp folder, reads the service's folders
 * or the usual secret stores, reaches a session-bus service, or has any network but the gateway and `allowedDomains`.
 */
export const PROGRAM_POLICIES = ['sandboxed', 'ask-approval', 'off'] as const;
export type ProgramPolicy = (typeof PROGRAM_POLICIES)[number];
export const SANDBOX_USES = ['required', 'preferred', 'off'] as const;
export type SandboxUse = (typeof SANDBOX_USES)[number];

/** What each program policy lets a delegate do, in the words the CLI and the settings page both use. */
export const PROGRAM_EXPLANATIONS: Record<ProgramPolicy, string> = {
  sandboxed: 'delegates run programs (npm test, builds) without asking, inside the sandbox',
  'ask-approval': 'a delegate runs programs only when the delegation pre-approves Bash (allowed_tools), sandboxed where the sandbox is used',
  off: 'delegates run no programs at all (no Bash tool)',
};

/** What each sandbox use means when no sandbox can be had on this machine. */
export const SANDBOX_USE_EXPLANATIONS: Record<SandboxUse, string> = {
  required: 'without a sandbox, a delegation whose delegate could run programs is refused, with how to get one',
  preferred: 'without a sandbox, programs run unsandboxed (only when pre-approved) and the job says so',
  off: 'never sandboxed: pre-approved programs run as you, with your files and network',
};

/**
 * A domain a sandboxed program may reach: `example.org`, `*.example.org`, optionally `:port`. Never a bare name
 * (`localhost`) or an address: the gateway, the service and the settings page live on loopback.
 */
export const SandboxDomainSchema = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)+(:\d{1,5})?$/, 'expected a domain like "registry.npmjs.org" or "*.example.org", optionally with ":port"')
  .refine((d) => !/^[\d.]+(:\d+)?$/.test(d), 'expected a domain name, not an address')
  .refine((d) => !/(^|\.)localhost(:\d+)?$/.test(d), 'loopback names are never reachable from the sandbox');

/** A path no sandboxed program may read: absolute, or `~/` for one under the home folder. */
export const SandboxPathSchema = z
  .string()
  .trim()
  .regex(/^(\/|~\/)[^\p{Cc}]*$/u, 'expected an absolute path, or one starting with ~/')
  .max(1000);

const sandboxShape = {
  programs: z.enum(PROGRAM_POLICIES).default('sandboxed'),
  use: z.enum(SANDBOX_USES).default('required'),
  /** Domains sandboxed programs may reach (package registries for a test run …); empty = no network at all. */
  allowedDomains: z.array(SandboxDomainSchema).max(100).default([]),
  /** Paths no sandboxed program may read, beside the service's folders and the usual secret stores. */
  denyRead: z.array(SandboxPathSchema).max(100).default([]),
};
export const SandboxPolicySchema = z.object(sandboxShape).strict();
export type SandboxPolicy = z.infer<typeof SandboxPolicySchema>;

/** Verify commands (docs/VERIFY.md): shell command lines run on a job's branch when its turn ends; at most 8 a delegation. */
export const MAX_VERIFY_COMMANDS = 8;
export const VerifyCommandsSchema = z.array(z.string().min(1).max(2000)).min(1).max(MAX_VERIFY_COMMANDS);

/**
 * A repository's verify commands, saved by the user (docs/VERIFY.md, "Saved verify commands"): a delegation there that
 * names none runs these, exactly as saved. `repo` is the repository's top folder, as git names it.
 */
export const SavedVerifySchema = z.object({ repo: z.string().min(1).max(4096), commands: VerifyCommandsSchema }).strict();
export type SavedVerify = z.infer<typeof SavedVerifySchema>;
/** The most repositories with saved verify commands. */
export const MAX_SAVED_VERIFY = 200;
