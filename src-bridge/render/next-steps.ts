/**
 * The calls a model should make next after a job answer (issue 23): for each state the one or two that move forward,
 * never the call just made — a finished job's answer is read once, then continued, retried or left; a job its budget
 * stopped is continued with a max_cost_usd that would do, or not at all when only the user can raise the budget.
 * Pure functions of contract data and the tool that answered.
 */
import { formatUsd } from '../../src-main/common/format.js';
import type { BudgetStop, JobView } from '../../src-main/contract/jobs.js';
import { isActive } from '../../src-main/contract/jobs.js';
import type { DELEGATE_START_TOOL } from '../mcp-names.js';
import { DELEGATE_CANCEL_TOOL, DELEGATE_FOLLOWUP_TOOL, DELEGATE_RESULT_TOOL, DELEGATE_STATUS_TOOL } from '../mcp-names.js';
import { STATE_WORDS } from './state-words.js';
import { toolCall } from './tool-call.js';

/** The tools that answer with a job. */
export type JobTool =
  typeof DELEGATE_START_TOOL | typeof DELEGATE_FOLLOWUP_TOOL | typeof DELEGATE_STATUS_TOOL | typeof DELEGATE_RESULT_TOOL | typeof DELEGATE_CANCEL_TOOL;

export interface Answered {
  /** The tool whose answer this is. */
  tool: JobTool;
  /** delegate_cancel found the job already ended: nothing was cancelled. */
  alreadyEnded?: boolean;
}

interface Step {
  call: string;
  why: string;
}

/** Continuing a finished job's conversation: what it is for, by how the job ended. */
const CONTINUE_WHY: Record<string, string> = {
  succeeded: 'to continue',
  failed: 'to retry in the same conversation',
  lost: 'to retry in the same conversation',
  cancelled: 'to resume it',
  timed_out: 'to go on where it stopped',
};

/** A budget stop in words, and the follow-up that would do (null: none would, only the user can help). */
function afterBudgetStop(view: JobView, stop: BudgetStop | undefined): { said: string; step: Step | null } {
  const { id, maxCostUsd } = view.job;
  const followup = (usd: number): Step => ({
    call: toolCall(DELEGATE_FOLLOWUP_TOOL, { job_id: id, prompt: '…', max_cost_usd: usd }),
    why: 'to go on with a cap that fits',
  });
  if (!stop) return { said: `It passed its cap of ${formatUsd(maxCostUsd)}.`, step: null };
  const ceiling = `the user's per-job budget is ${formatUsd(stop.perJobUsd)}`;
  if (stop.daily) return { said: "The day's budget is spent: nothing more can run today unless the user raises it.", step: null };
  if (stop.enoughUsd !== null && stop.enoughUsd <= stop.perJobUsd) {
    return { said: `max_cost_usd ${formatUsd(stop.enoughUsd)} would have let its last request through; ${ceiling}.`, step: followup(stop.enoughUsd) };
  }
  if (stop.enoughUsd !== null) {
    return { said: `It would have needed max_cost_usd ${formatUsd(stop.enoughUsd)}, more than ${ceiling}: only the user can raise that.`, step: null };
  }
  if (maxCostUsd >= stop.perJobUsd)
    return { said: `It ran at the user's per-job budget of ${formatUsd(stop.perJobUsd)}: only the user can raise that.`, step: null };
  return {
    said: `A follow-up needs a larger max_cost_usd than its ${formatUsd(maxCostUsd)}; ${ceiling}.`,
    step: followup(Math.min(stop.perJobUsd, maxCostUsd * 2)),
  };
}

/** What a finished job's conversation can do next, after its answer: continue (or nothing), with what to say first. */
function forward(view: JobView): { said: string | null; step: Step | null } {
  const { id, state } = view.job;
  if (state === 'budget_exceeded') return afterBudgetStop(view, view.budgetStop);
  const verify = view.job.verify;
  if (verify?.outcome === 'failed' && verify.fixJobId) {
    return { said: null, step: { call: toolCall(DELEGATE_RESULT_TOOL, { job_id: verify.fixJobId, wait_seconds: 120 }), why: 'for the fix round' } };
  }
  if (verify?.outcome === 'failed' && state === 'succeeded') {
    return { said: null, step: { call: toolCall(DELEGATE_FOLLOWUP_TOOL, { job_id: id, prompt: '…' }), why: 'to fix what failed (or discard it)' } };
  }
  const why = CONTINUE_WHY[state];
  return { said: null, step: why ? { call: toolCall(DELEGATE_FOLLOWUP_TOOL, { job_id: id, prompt: '…' }), why } : null };
}

function sentence(steps: Step[]): string {
  const [first, second] = steps;
  if (!first) return '';
  if (!second) return first.why.startsWith('to ') ? `Next, ${first.why}: ${first.call}` : `Next: ${first.call} ${first.why}`;
  return `Next: ${first.call} ${first.why}; ${second.call} ${second.why}.`;
}

/**
 * The lines that end a job answer: what the model should know first (a cancel that found nothing to cancel, why a
 * larger cap would or would not help), then "Next: …". `answerShown`: the answer (or its absence) is in this text.
 */
export function nextLines(view: JobView, answered: Answered, answerShown: boolean): string[] {
  const { id, state } = view.job;
  if (isActive(state)) {
    const wait = toolCall(DELEGATE_RESULT_TOOL, { job_id: id, wait_seconds: 120 });
    if (answered.tool === DELEGATE_STATUS_TOOL) return [`Next: ${wait} for the answer, or ${toolCall(DELEGATE_CANCEL_TOOL, { job_id: id })} to stop it.`];
    return [`Next: ${wait}`];
  }
  const lines: string[] = [];
  if (answered.alreadyEnded) lines.push(`Nothing to cancel: it had already ended (${STATE_WORDS[state]}).`);
  const seen = answerShown || answered.tool === DELEGATE_RESULT_TOOL;
  const { said, step } = forward(view);
  if (said) lines.push(said);
  const steps: Step[] = [];
  // Not read yet: the answer first. A success's answer decides what follows; any other end is worth continuing at once.
  // An answer shown in part (its start, inline) is read whole there too.
  const part = answered.tool !== DELEGATE_RESULT_TOOL && !answerShown && 'resultText' in view && view.resultText !== null;
  if (!seen)
    steps.push({
      call: toolCall(DELEGATE_RESULT_TOOL, { job_id: id }),
      why: part ? 'for the whole answer' : state === 'succeeded' ? 'for the answer' : 'for what it did',
    });
  // A job this very call cancelled was stopped on purpose: what it did is worth a look, going on is not the next step.
  const justCancelled = answered.tool === DELEGATE_CANCEL_TOOL && !answered.alreadyEnded;
  // A success its verify commands failed is no success: what fixes it is worth naming before its answer is read.
  const judgedFailed = view.job.verify?.outcome === 'failed';
  if (step && (seen || state !== 'succeeded' || judgedFailed) && !justCancelled) steps.push(step);
  // A fan-out still under way: its other models are what is left to read.
  const running = seen ? view.group?.jobs.find((m) => m.jobId !== id && isActive(m.state)) : undefined;
  if (running) steps.unshift({ call: toolCall(DELEGATE_RESULT_TOOL, { job_id: running.jobId, wait_seconds: 120 }), why: 'for the next model' });
  if (steps.length === 0) lines.push('Next: nothing to call here; tell the user, or do the rest yourself.');
  else lines.push(sentence(steps.slice(0, 2)));
  return lines;
}
