/**
 * Claude Code set-up over the contract (docs/ARCHITECTURE.md §6: the settings window's "Claude Code" page):
 * whether this installation's bridge is registered, the exact command, and the doctor's checks —
 * the same answers `openrouter-delegate install | uninstall | doctor` print.
 */
import { z } from 'zod';

export const CHECK_STATUSES = ['ok', 'warn', 'fail'] as const;
export const CheckStatusSchema = z.enum(CHECK_STATUSES);
export type CheckStatus = z.infer<typeof CheckStatusSchema>;

export const CheckResultSchema = z.object({
  id: z.string(),
  title: z.string(),
  status: CheckStatusSchema,
  /** What was found. */
  summary: z.string(),
  /** What to do about it; absent when there is nothing to do. */
  fix: z.string().optional(),
  /** How long the check's request took, when that is part of the answer (OpenRouter). */
  durationMs: z.number().optional(),
});

export const DoctorReportSchema = z.object({
  version: z.string(),
  /** False when any check failed (a warning alone keeps it true). */
  ok: z.boolean(),
  checks: z.array(CheckResultSchema),
});

export const REGISTRATION_STATES = ['registered', 'different', 'absent'] as const;

export const SetupStatusSchema = z.object({
  /** The name the bridge is registered under ("openrouter"). */
  serverName: z.string(),
  /** Claude Code's user config file, which holds the registration. */
  configFile: z.string(),
  /** The command Claude Code should start for this installation, as one shell line. */
  command: z.string(),
  /** The `claude mcp add …` line that registers it by hand (what Connect runs). */
  addCommand: z.string(),
  /** Environment the registration sets (names and values: folder paths only, never a key). */
  env: z.record(z.string(), z.string()),
  /** registered: this installation's bridge; different: another command under our name; absent: none. */
  registration: z.enum(REGISTRATION_STATES),
  /** What is registered now, as a shell line (or the transport and URL of a non-stdio entry). */
  registeredCommand: z.string().nullable(),
  /** How the registered entry differs from this installation's command, in words. */
  differences: z.array(z.string()),
  /** The `claude` CLI Connect would run, or why there is none. */
  claude: z.object({ path: z.string().nullable(), problem: z.string().optional() }),
  /** False when the bridge this installation would register is missing (not built / damaged install). */
  bridgeExists: z.boolean(),
});
export type SetupStatus = z.infer<typeof SetupStatusSchema>;

export const SetupActionSchema = z.object({
  /** What happened, in the CLI's words. */
  lines: z.array(z.string()),
  status: SetupStatusSchema,
});
export type SetupAction = z.infer<typeof SetupActionSchema>;
export type DoctorReportWire = z.infer<typeof DoctorReportSchema>;
