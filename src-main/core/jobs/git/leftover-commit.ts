/**
 * The commit the service makes of what a worktree job's delegate left uncommitted when it ended (worktrees.ts,
 * saveToBranch), and its message.
 */

/** How a job ended, as its leftover commit says it. */
export interface Ending {
  jobId: string;
  state: string;
  reason: string | null;
  /** What the job was asked (the prompt's first line), for the commit's subject. */
  task?: string;
  model?: string;
}

/** A subject line's length at most, as git's own tools show it without cutting. */
const SUBJECT_CHARACTERS = 72;

/**
 * The message of the commit the service makes of what a delegate left uncommitted (issue 38): what lands in the
 * user's branch when they take the work reads as a reviewer wants it, whichever way it is taken (a fast-forward
 * cannot rewrite it). The subject is what the job was asked; the trailers say which job and model. Every text is
 * bounded and stripped of control characters: the task is a model's words, not ours.
 */
export function leftoverCommitMessage(ending: Ending): string {
  const clean = (text: string, max: number) => {
    const flat = text
      .replace(/[\p{Cc}\p{Cf}]+/gu, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    return flat.length > max ? `${flat.slice(0, max - 1).trimEnd()}…` : flat;
  };
  const task = clean(ending.task ?? '', SUBJECT_CHARACTERS);
  const subject = task || `Work left uncommitted by delegate job ${ending.jobId}`;
  const why = ending.reason ? `: ${clean(ending.reason, 200)}` : '';
  const trailers = [`Delegate-Job: ${ending.jobId}`, ...(ending.model ? [`Delegate-Model: ${clean(ending.model, 200)}`] : [])];
  return `${subject}\n\nWhat the delegate left uncommitted when its job ended (${ending.state}${why}), committed by OpenRouter Delegate so the branch holds all of its work.\n\n${trailers.join('\n')}`;
}
