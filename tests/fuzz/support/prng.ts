/**
 * A small seeded generator for the fuzz suite, so that a failure reproduces: every fuzz test prints
 * its seed when it fails, and `FUZZ_SEED=<seed> npx vitest run tests/fuzz` replays the same inputs.
 * sfc32 seeded through cyrb128: fast, 32-bit, no dependency, and good enough to pick inputs.
 */
import { randomBytes } from 'node:crypto';

/** The seed for this run: FUZZ_SEED when set, else a fresh one. */
export function fuzzSeed(): string {
  const given = process.env.FUZZ_SEED?.trim();
  return given ? given : randomBytes(4).toString('hex');
}

/** FUZZ_SCALE=4 runs four times as many inputs (for long local runs); the default keeps CI short. */
export function fuzzScale(): number {
  const scale = Number(process.env.FUZZ_SCALE ?? '1');
  return Number.isFinite(scale) && scale > 0 ? scale : 1;
}

/** What to print when a fuzz test fails. */
export function reproduceHint(seed: string, file: string): string {
  return `fuzz seed ${seed}: reproduce with FUZZ_SEED=${seed} npx vitest run ${file}`;
}

function cyrb128(text: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(readonly seed: string) {
    [this.a, this.b, this.c, this.d] = cyrb128(seed);
    // The first outputs of sfc32 are weakly mixed: skip them.
    for (let i = 0; i < 15; i++) this.u32();
  }

  /** An independent stream for one part of a test, so that adding inputs to one part leaves the others as they were. */
  fork(label: string): Rng {
    return new Rng(`${this.seed}/${label}`);
  }

  u32(): number {
    this.a >>>= 0;
    this.b >>>= 0;
    this.c >>>= 0;
    this.d >>>= 0;
    let t = (this.a + this.b) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.d = (this.d + 1) | 0;
    t = (t + this.d) | 0;
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** [0, 1) */
  float(): number {
    return this.u32() / 4294967296;
  }

  /** An integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.float() * n);
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + this.below(max - min + 1);
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick from an empty list');
    return items[this.below(items.length)] as T;
  }

  /** One of the entries, with probability proportional to its weight. */
  weighted<T>(entries: ReadonlyArray<readonly [number, T]>): T {
    let total = 0;
    for (const [weight] of entries) total += weight;
    let at = this.float() * total;
    for (const [weight, value] of entries) {
      if (at < weight) return value;
      at -= weight;
    }
    return (entries[entries.length - 1] as readonly [number, T])[1];
  }

  /** Mostly small, sometimes large: lengths and counts where small values find most bugs. */
  size(max: number): number {
    const r = this.float();
    if (r < 0.5) return this.int(0, Math.min(max, 8));
    if (r < 0.85) return this.int(0, Math.min(max, 64));
    return this.int(0, max);
  }

  bytes(length: number): Buffer {
    const out = Buffer.allocUnsafe(length);
    for (let i = 0; i < length; i += 4) {
      const word = this.u32();
      for (let j = 0; j < 4 && i + j < length; j++) out[i + j] = (word >>> (8 * j)) & 0xff;
    }
    return out;
  }

  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.below(i + 1);
      [items[i], items[j]] = [items[j] as T, items[i] as T];
    }
    return items;
  }
}
