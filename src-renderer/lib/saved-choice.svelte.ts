/**
 * A choice setting saved as soon as it is picked (the mode radios, the permission selects): what the
 * control shows (`draft`), whether it is being saved, and why a choice was refused. A refused choice
 * goes back to the saved one — a control never shows what is not saved — and the reason stays; a
 * change made elsewhere (the CLI) replaces what is shown and clears a refusal it made moot.
 * Create it while a component initialises (it follows `saved` with an effect).
 */
import { untrack } from 'svelte';
import type { SaveState } from '../components/delegation/DelegationSaveStatus.svelte';

export class SavedChoice<T> {
  draft = $state() as T;
  saveState = $state<SaveState>('idle');
  error = $state<string | null>(null);
  private readonly saved: () => T;
  private readonly send: (value: T) => Promise<string | null>;

  /** `send` saves a value and answers why it was refused, or null. */
  constructor(saved: () => T, send: (value: T) => Promise<string | null>) {
    this.saved = saved;
    this.send = send;
    this.draft = untrack(saved);
    $effect(() => {
      const value = saved();
      untrack(() => {
        if (this.saveState === 'saving' || this.draft === value) return;
        this.draft = value;
        this.error = null;
        this.saveState = 'idle';
      });
    });
  }

  /** Saves what the control shows now. */
  async commit(): Promise<void> {
    const chosen = this.draft;
    if (chosen === this.saved()) {
      this.error = null;
      this.saveState = 'idle';
      return;
    }
    this.saveState = 'saving';
    const problem = await this.send(chosen);
    // Another choice was made meanwhile: its own commit reports.
    if (this.draft !== chosen) return;
    this.error = problem;
    this.saveState = problem ? 'idle' : 'saved';
    if (problem) this.draft = this.saved();
  }
}
