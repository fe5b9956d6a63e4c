/**
 * A repository's verify commands as the user sees them before saving (docs/VERIFY.md, "Saved verify commands"): what is
 * saved for it, and what its top folder suggests (core/verify/suggest.ts). Saving is `settings.update` of
 * `verifyCommands`, exactly the text the user confirmed.
 */
import { z } from 'zod';

export const VerifySuggestionSchema = z.object({
  command: z.string(),
  /** The file and entry that suggested it, in words: "package.json script test", "Makefile target test", "go.mod". */
  from: z.string(),
});
export type VerifySuggestion = z.infer<typeof VerifySuggestionSchema>;

export const VerifyCommandsRequestSchema = z.object({ folder: z.string().min(1).max(4096) }).strict();

export const VerifyCommandsReportSchema = z.object({
  /** The repository's top folder, as git names it: the key its commands are saved under. */
  repo: z.string(),
  saved: z.array(z.string()).nullable(),
  suggested: z.array(VerifySuggestionSchema),
});
export type VerifyCommandsReport = z.infer<typeof VerifyCommandsReportSchema>;
