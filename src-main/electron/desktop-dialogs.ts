/**
 * The questions the tray app asks in a message box (desktop-app.ts): before killing every job, before quitting with
 * jobs running, and the word that a menu action failed. Buttons show as buttons, never as links (Windows' `noLink`).
 */
import type { DialogSurface, MessageBoxOptions } from './electron-surface.js';

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Shows a message box; the index of the button chosen. */
export async function ask(dialog: DialogSurface, options: Omit<MessageBoxOptions, 'noLink'>): Promise<number> {
  return (await dialog.showMessageBox({ ...options, noLink: true })).response;
}

/** Shows a message box whose answer does not matter; a box that fails to show is let go. */
export async function tell(dialog: DialogSurface, options: Omit<MessageBoxOptions, 'noLink'>): Promise<void> {
  await ask(dialog, options).catch(() => undefined);
}

/** A menu action the user asked for did not work: says so, with why. */
export function tellActionFailed(dialog: DialogSurface, detail: string): Promise<void> {
  return tell(dialog, { type: 'error', message: 'That did not work.', detail, buttons: ['OK'] });
}

/** Whether the user confirms killing `count` running jobs (Cancel is the default). */
export async function confirmKillAll(dialog: DialogSurface, count: number): Promise<boolean> {
  const answer = await ask(dialog, {
    type: 'warning',
    message: `Kill ${plural(count, 'delegated job')}?`,
    detail: 'Each job ends now, with every process it started. What the jobs did so far stays in their folders.',
    buttons: [`Kill ${plural(count, 'job')}`, 'Cancel'],
    defaultId: 1,
    cancelId: 1,
  });
  return answer === 0;
}

/** Quitting with `count` jobs running: keep them running, kill them, or do not quit after all. */
export async function askAboutRunningJobs(dialog: DialogSurface, count: number): Promise<'keep' | 'kill' | 'cancel'> {
  const answer = await ask(dialog, {
    type: 'question',
    message: `${plural(count, 'delegated job')} ${count === 1 ? 'is' : 'are'} still running.`,
    detail:
      'Kept jobs carry on without the app and are picked up again the next time it starts (their costs still count). Killed jobs end now, with everything they started.',
    buttons: ['Keep them running', 'Kill them', 'Cancel'],
    defaultId: 0,
    cancelId: 2,
  });
  return answer === 0 ? 'keep' : answer === 1 ? 'kill' : 'cancel';
}
