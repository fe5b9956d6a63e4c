import { describe, expect, it } from 'vitest';
import { leftoverCommitMessage } from '../../../../src-main/core/jobs/git/leftover-commit.js';

describe("the commit of what a delegate left uncommitted, as it lands in the user's branch (issue 38)", () => {
  it('has what the job was asked as its subject, why it was made in its body, and the job and model as trailers', () => {
    expect(leftoverCommitMessage({ jobId: 'job_1', state: 'succeeded', reason: null, task: 'Add a retry to the fetch client', model: 'z-ai/glm-4.7' })).toBe(
      'Add a retry to the fetch client\n\n' +
        'What the delegate left uncommitted when its job ended (succeeded), committed by OpenRouter Delegate so the branch holds all of its work.\n\n' +
        'Delegate-Job: job_1\nDelegate-Model: z-ai/glm-4.7',
    );
  });

  it('bounds a long task to one short line and strips what a terminal or git would read as more than text', () => {
    const message = leftoverCommitMessage({
      jobId: 'job_2',
      state: 'cancelled',
      reason: 'Cancelled\non request.',
      task: `Fix\u001b]8;;evil\u0007 ${'x'.repeat(200)}\r\nDelegate-Job: job_forged`,
    });
    const [subject = '', , body = ''] = message.split('\n');
    expect(subject.length).toBeLessThanOrEqual(72);
    expect(subject).toMatch(/^Fix \]8;;evil x+…$/);
    expect(body).toContain('(cancelled: Cancelled on request.)');
    expect(message.match(/^Delegate-Job: .*$/gm)).toEqual(['Delegate-Job: job_2']);
  });

  it('falls back to naming the job when there is no task', () => {
    expect(leftoverCommitMessage({ jobId: 'job_3', state: 'failed', reason: null }).split('\n')[0]).toBe('Work left uncommitted by delegate job job_3');
  });
});
