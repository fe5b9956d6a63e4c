/**
 * How Claude Code delegates and what a delegate is given (docs/ARCHITECTURE.md §5): the delegation mode, the
 * permission modes, the delegate profiles and the isolation modes, each with the words every surface shows for it.
 */
import { z } from 'zod';

export const DELEGATION_MODES = ['off', 'ondemand', 'auto'] as const;
export const DelegationModeSchema = z.enum(DELEGATION_MODES);
export type DelegationMode = z.infer<typeof DelegationModeSchema>;

/**
 * Claude Code's permission modes (as `claude --help` lists them), ordered from least to most
 * powerful: the order is the ceiling order. In a headless session `dontAsk` and `manual` both deny
 * what is not pre-approved (`allowed_tools`); `auto` lets Claude Code's classifier approve actions.
 */
export const PERMISSION_MODES = ['plan', 'dontAsk', 'manual', 'acceptEdits', 'auto', 'bypassPermissions'] as const;
export const PermissionModeSchema = z.enum(PERMISSION_MODES);
export type PermissionMode = z.infer<typeof PermissionModeSchema>;

/**
 * What a delegate's Claude Code is given (docs/GUIDE.md "Delegate profiles"), ordered from least to most: the
 * order is the ceiling order. Every turn sends every tool's schema again, so fewer tools cost less.
 */
export const DELEGATE_PROFILES = ['minimal', 'lean', 'full'] as const;
export const DelegateProfileSchema = z.enum(DELEGATE_PROFILES);
export type DelegateProfile = z.infer<typeof DelegateProfileSchema>;

/**
 * The built-in tools each profile gives a delegate, as the pinned Claude Code names them; null for Claude
 * Code's own default set. `lean` is what a coding task needs, nothing to start sub-agents, workflows,
 * schedules or skills; `minimal` is for text tasks (and runs Claude Code with --bare).
 */
export const PROFILE_TOOLS: Readonly<Record<DelegateProfile, readonly string[] | null>> = {
  minimal: ['Read'],
  lean: ['Bash', 'Read', 'Edit', 'Write', 'Glob', 'Grep'],
  full: null,
};

/**
 * Where a delegate works (docs/ISOLATION.md): `worktree`, a git worktree of its own on a new branch,
 * outside the user's tree; `none`, the user's folder in place.
 */
export const ISOLATION_MODES = ['worktree', 'none'] as const;
export const IsolationModeSchema = z.enum(ISOLATION_MODES);
export type IsolationMode = z.infer<typeof IsolationModeSchema>;

/** What each isolation mode does, in the words the CLI and the settings page both use. */
export const ISOLATION_EXPLANATIONS: Record<IsolationMode, string> = {
  worktree: 'each delegate works in a git worktree of its own, on a branch you review and merge; your tree and index stay untouched',
  none: 'delegates edit your folder in place, beside you and each other',
};

/** What Claude Code sees in each delegation mode, in the words the CLI and the settings page both use. */
export const MODE_EXPLANATIONS: Record<DelegationMode, string> = {
  off: 'Claude Code sees only the model list: the delegate tools are hidden and no job starts.',
  ondemand: 'Claude Code sees the delegate tools but uses them only when you ask it to delegate.',
  auto: 'Claude Code may hand bulk work (summaries, searches, boilerplate) to a cheaper model on its own.',
};

/** What each profile gives a delegate, in the words the CLI and the settings page both use. */
export const PROFILE_EXPLANATIONS: Record<DelegateProfile, string> = {
  minimal: 'text tasks: only Read, no CLAUDE.md, hooks or project context (Claude Code --bare)',
  lean: 'coding tasks: Bash, Read, Edit, Write, Glob, Grep; no sub-agents, workflows, schedules or skills',
  full: "Claude Code's whole default tool set: more than twice the bytes on every request",
};

/** What each permission mode lets a delegated session do, in the words the CLI and the settings page both use. */
export const PERMISSION_EXPLANATIONS: Record<PermissionMode, string> = {
  plan: 'read-only: the delegate may look, not change anything',
  dontAsk: 'only the tools you pre-approve (allowed_tools); everything else is denied',
  manual: 'like dontAsk in a headless session: only pre-approved tools',
  acceptEdits: 'may edit files; commands only when pre-approved',
  auto: "Claude Code's classifier approves actions it deems safe",
  bypassPermissions: 'anything, without asking: use only in a sandbox',
};
