import type { ArchiveStore } from '../store/archive-store-spec.ts';

/**
 * Sequence numbers for records that arrive without one: the stored sequence of a known id (so re-adding is
 * unchanged), else one past the highest sequence of the context (stored or seen in this import).
 */
export class SequenceAssigner {
  private readonly next = new Map<string, number>();
  /** One past the highest explicit sequence seen per context before its stored maximum was read. */
  private readonly seen = new Map<string, number>();

  constructor(private readonly store: ArchiveStore) {}

  async forMissing(contextId: string, id: string | undefined): Promise<number> {
    if (id !== undefined) {
      const stored = await this.store.getMemory(contextId, id);
      if (stored) return stored.sequence;
    }
    const value = await this.nextFor(contextId);
    this.next.set(contextId, value + 1);
    return value;
  }

  saw(contextId: string, sequence: number): void {
    this.seen.set(contextId, Math.max(this.seen.get(contextId) ?? 0, sequence + 1));
    const next = this.next.get(contextId);
    if (next !== undefined) this.next.set(contextId, Math.max(next, sequence + 1));
  }

  /** One index probe per context the first time it is seen (never a walk over every context). */
  private async nextFor(contextId: string): Promise<number> {
    let value = this.next.get(contextId);
    if (value === undefined) {
      const max = await this.store.maxSequence(contextId);
      value = Math.max(max === undefined ? 0 : max + 1, this.seen.get(contextId) ?? 0);
      this.next.set(contextId, value);
    }
    return value;
  }
}
