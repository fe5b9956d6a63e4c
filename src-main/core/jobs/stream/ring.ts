/** Fixed-size ring: the newest `capacity` entries, oldest overwritten first (a job's bounded tail, stream-parser.ts). */
export class Ring<T> {
  private readonly items: T[] = [];
  private next = 0;

  constructor(private readonly capacity: number) {}

  push(item: T): void {
    if (this.items.length < this.capacity) this.items.push(item);
    else this.items[this.next] = item;
    this.next = (this.next + 1) % this.capacity;
  }

  /** The newest `limit` items, oldest first. */
  last(limit: number): T[] {
    const size = this.items.length;
    const count = Math.max(0, Math.min(size, Math.floor(limit)));
    const out: T[] = new Array<T>(count);
    // When full, `next` is the oldest slot; before that the array is already in order.
    const oldest = size < this.capacity ? 0 : this.next;
    for (let i = 0; i < count; i++) out[i] = this.items[(oldest + size - count + i) % size] as T;
    return out;
  }
}
