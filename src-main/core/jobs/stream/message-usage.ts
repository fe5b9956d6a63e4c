/**
 * The usage of a stream's latest messages, by message id, so that a message's repeats are merged into one
 * (stream-parser.ts says why a message comes more than once) and the total counts each message once.
 *
 * Fixed slots searched newest first, not a `Map` of usage objects: a long stream's thousands of messages then
 * leave nothing behind to collect. The map kept each message's object, and the entries of its table, for as
 * long as its window lasted; every one outlived V8's young generation and died in the old one. Under 20 jobs
 * streaming 10 MB each (bench/delegation.ts) that was the largest share of the service's growth.
 */
import { ZERO_USAGE } from '../../../contract/jobs.js';
import type { Usage } from '../../../contract/jobs.js';

/** The fields of a slot, in order. */
const FIELDS = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'] as const;
const WIDTH = FIELDS.length;

export class MessageUsage {
  private readonly ids: Array<string | null>;
  /** WIDTH numbers per slot, one per field. */
  private readonly tokens: Float64Array;
  /** A message's numbers while the ones after it move up. */
  private readonly scratch = new Float64Array(WIDTH);
  private newest: number;
  readonly total: Usage = { ...ZERO_USAGE };

  constructor(private readonly capacity: number) {
    this.ids = new Array<string | null>(capacity).fill(null);
    this.tokens = new Float64Array(capacity * WIDTH);
    this.newest = capacity - 1;
  }

  /**
   * One more reading of a message's usage: each field keeps the largest value read, and the total grows by what
   * that adds. A message without an id cannot be matched with its repeats, so it counts on its own: that may
   * overcount, the safe side for a budget; so does a repeat that comes after `capacity` other messages.
   */
  add(id: string | null, usage: Usage): void {
    if (id === null) {
      for (const name of FIELDS) this.total[name] += usage[name];
      return;
    }
    const found = this.find(id);
    if (found === -1) {
      // The oldest message's slot: it is forgotten.
      this.newest = (this.newest + 1) % this.capacity;
      this.ids[this.newest] = id;
      this.tokens.fill(0, this.newest * WIDTH, (this.newest + 1) * WIDTH);
    } else {
      // Taken to the newest end, the younger ones moved up a slot: a message still being repeated is never the one
      // forgotten. A repeat comes within a few messages of the one before, so few move.
      for (let field = 0; field < WIDTH; field++) this.scratch[field] = this.tokens[found * WIDTH + field] as number;
      for (let slot = found; slot !== this.newest; slot = (slot + 1) % this.capacity) {
        const next = (slot + 1) % this.capacity;
        this.ids[slot] = this.ids[next] ?? null;
        this.tokens.copyWithin(slot * WIDTH, next * WIDTH, (next + 1) * WIDTH);
      }
      this.ids[this.newest] = id;
      this.tokens.set(this.scratch, this.newest * WIDTH);
    }
    const at = this.newest * WIDTH;
    for (let field = 0; field < WIDTH; field++) {
      const name = FIELDS[field] as (typeof FIELDS)[number];
      const previous = this.tokens[at + field] as number;
      const next = Math.max(previous, usage[name]);
      this.tokens[at + field] = next;
      this.total[name] += next - previous;
    }
  }

  /** The remembered messages' usage by id, oldest first (those without an id are in the total only): a copy. */
  byMessage(): Map<string, Usage> {
    const view = new Map<string, Usage>();
    for (let step = this.capacity - 1; step >= 0; step--) {
      const slot = this.slotBack(step);
      const id = this.ids[slot];
      if (id === null || id === undefined) continue;
      const usage = { ...ZERO_USAGE };
      for (let field = 0; field < WIDTH; field++) usage[FIELDS[field] as (typeof FIELDS)[number]] = this.tokens[slot * WIDTH + field] as number;
      view.set(id, usage);
    }
    return view;
  }

  /** The slot holding `id`, searched from the newest: a repeat follows its message within a few others. */
  private find(id: string): number {
    for (let step = 0; step < this.capacity; step++) {
      const slot = this.slotBack(step);
      if (this.ids[slot] === id) return slot;
    }
    return -1;
  }

  /** The slot `step` places before the newest. */
  private slotBack(step: number): number {
    return (this.newest - step + this.capacity) % this.capacity;
  }
}
