/**
 * A question asked in place before an action that cannot be undone (Kill all, removing the taken worktrees, removing
 * a key), with one behaviour everywhere on the page: asking opens it and puts the focus on the safe answer, so Enter
 * or Escape right away keeps things as they are; keeping closes it and gives the focus back to the button that asked;
 * Escape keeps, unless the action is under way. Bind the two buttons (`bind:this={confirm.asker}`, `bind:this={
 * confirm.safe}`) and put `onkeydown={confirm.onkeydown}` on the question's group.
 */
import { tick } from 'svelte';

export class ConfirmFirst {
  /** Whether the question is open. */
  open = $state(false);
  /** The button that asks (focused again once the question closes). */
  asker = $state<HTMLElement | null>(null);
  /** The safe answer (focused when the question opens). */
  safe = $state<HTMLElement | null>(null);
  private readonly busy: () => boolean;

  /** `busy`: whether the action is under way (Escape then does nothing). */
  constructor(busy: () => boolean = () => false) {
    this.busy = busy;
  }

  /** Opens the question, the safe answer focused. */
  ask = async (): Promise<void> => {
    this.open = true;
    await tick();
    this.safe?.focus();
  };

  /** Closes the question without acting, the asking button focused. */
  keep = async (): Promise<void> => {
    this.open = false;
    await this.focusAsker();
  };

  /** Gives the focus back to the asking button, once the page has drawn it (after the action, whatever its outcome). */
  focusAsker = async (): Promise<void> => {
    await tick();
    this.asker?.focus();
  };

  onkeydown = (event: KeyboardEvent): void => {
    if (event.key !== 'Escape' || this.busy()) return;
    event.preventDefault();
    void this.keep();
  };
}
