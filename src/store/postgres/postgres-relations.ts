import type { MemoryRecord } from '../../types/memory-record.ts';
import type { MemoryEdge, RelationType } from '../../types/relation.ts';
import type { EdgeChange, RelationWork } from '../archive-store-spec.ts';
import { diffEdgeReplacement, emptyEdgeCounts } from '../edge-merge.ts';
import { PostgresEdgeLists } from './postgres-edge-lists.ts';
import { PostgresEdges } from './postgres-edges.ts';
import { CLEAR_JOURNAL, EDGE_COUNTS } from './postgres-literal-plans.ts';
import { escapeLiteral, type PostgresSession } from './postgres-session.ts';

/**
 * The PostgreSQL store's relations: the relation journal (served from a unit's read-ahead where it can be) and
 * the edges (postgres-edges.ts), written one edge write at a time per context.
 */
export class PostgresRelations {
  private readonly edges = new PostgresEdges();
  /** The question path's edge lists by read generation (read units only). */
  private readonly lists = new PostgresEdgeLists(this.edges);

  constructor(private readonly session: PostgresSession) {}

  async pendingRelationWork(contextId: string, limit: number): Promise<RelationWork[]> {
    const prefetch = await this.session.readAhead(contextId);
    const ahead = prefetch?.journal;
    if (ahead && ahead.entries.length <= limit) {
      // Served once (the records stay for getMemories); a second call reads the table.
      prefetch.journal = { entries: [], records: ahead.records };
      prefetch.journalStatus = undefined;
      if (ahead.entries.length > 0) return ahead.entries;
    }
    const rows = await this.session.scoped(contextId, 'read', (sql) =>
      sql.query<{ seq: number; memory_id: string; before: string | null }>(
        'SELECT seq, memory_id, before FROM relation_journal WHERE context_id = $1 ORDER BY seq LIMIT $2',
        [contextId, Math.max(0, limit)],
      ),
    );
    return rows.rows.map((row) =>
      row.before === null
        ? { seq: row.seq, memoryId: row.memory_id }
        : { seq: row.seq, memoryId: row.memory_id, before: JSON.parse(row.before) as MemoryRecord },
    );
  }

  async clearRelationWork(contextId: string, seqs: readonly number[] | { through: number }): Promise<void> {
    if (Array.isArray(seqs) && seqs.length === 0) return;
    if (
      Array.isArray(seqs) &&
      seqs.every((seq) => Number.isSafeInteger(seq)) &&
      this.session.deferInUnit(
        contextId,
        CLEAR_JOURNAL.call(escapeLiteral(contextId), `'{${seqs.join(',')}}'`),
      )
    ) {
      // Queued in the unit (sent with its next statement or its COMMIT); journal reads ahead are stale now.
      const prefetch = this.session.prefetchFor(contextId);
      if (prefetch) prefetch.journalStatus = prefetch.journal = undefined;
      return;
    }
    await this.session.scoped(contextId, 'write', (sql) =>
      Array.isArray(seqs)
        ? sql.query('DELETE FROM relation_journal WHERE context_id = $1 AND seq = ANY($2::bigint[])', [
            contextId,
            seqs,
          ])
        : sql.query('DELETE FROM relation_journal WHERE context_id = $1 AND seq <= $2', [
            contextId,
            (seqs as { through: number }).through,
          ]),
    );
  }

  async contextsWithRelationWork(): Promise<string[]> {
    const rows = await this.session.allContexts((sql) =>
      sql.query<{ context_id: string }>(
        'SELECT DISTINCT context_id FROM relation_journal ORDER BY context_id',
      ),
    );
    return rows.rows.map((row) => row.context_id);
  }

  async hasRelationWork(contextId: string): Promise<boolean> {
    const ahead = (await this.session.readAhead(contextId))?.journalStatus;
    if (ahead) return ahead.pending > 0;
    const rows = await this.session.scoped(contextId, 'read', (sql) =>
      sql.query<{ pending: boolean }>(
        'SELECT EXISTS (SELECT 1 FROM relation_journal WHERE context_id = $1) AS pending',
        [contextId],
      ),
    );
    return rows.rows[0]!.pending;
  }

  async relationWorkStatus(contextId: string): Promise<{ pending: number; lastSeq?: number }> {
    const ahead = (await this.session.readAhead(contextId))?.journalStatus;
    if (ahead) return { ...ahead };
    const rows = await this.session.scoped(contextId, 'read', (sql) =>
      sql.query<{ n: number; last: number | null }>(
        'SELECT count(*) AS n, max(seq) AS last FROM relation_journal WHERE context_id = $1',
        [contextId],
      ),
    );
    const row = rows.rows[0]!;
    return row.last === null ? { pending: row.n } : { pending: row.n, lastSeq: row.last };
  }

  async replaceEdges(
    contextId: string,
    types: readonly RelationType[],
    edges: readonly MemoryEdge[],
  ): Promise<void> {
    await this.session.serialEdgeWrite(contextId, () =>
      this.session.scoped(contextId, 'write', async (sql) => {
        const existing = await this.edges.all(sql, contextId);
        await this.edges.write(sql, contextId, diffEdgeReplacement(contextId, existing, types, edges));
      }),
    );
  }

  async changeEdges(contextId: string, changes: readonly EdgeChange[]): Promise<void> {
    if (changes.length === 0) return;
    await this.session.serialEdgeWrite(contextId, () =>
      this.session.scoped(
        contextId,
        'write',
        (sql) => this.edges.change(sql, contextId, changes, this.session.unitEdges(contextId)),
        // Edges and their counts only: nothing a unit reads ahead; the unit's edge knowledge takes the diff.
        { keepsPrefetch: true, keepsEdges: true },
      ),
    );
  }

  async neighbors(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    if (memoryIds.length === 0) return [];
    return this.session.scoped(contextId, 'read', async (sql) => {
      const generation = this.session.readGeneration(contextId);
      if (generation !== undefined) return this.lists.neighbors(sql, contextId, memoryIds, generation);
      // Inside a unit, a later changeEdges of pairs touching these ids needs no read of them (unless an edge
      // write was issued while this read ran: UnitEdges.learn).
      const known = this.session.unitEdges(contextId);
      const mark = known?.writeMark() ?? 0;
      const edges = await this.edges.touching(sql, contextId, memoryIds);
      known?.learn(memoryIds, edges, mark);
      return edges;
    });
  }

  async edgesAmong(contextId: string, memoryIds: readonly string[]): Promise<MemoryEdge[]> {
    if (memoryIds.length < 2) return [];
    return this.session.scoped(contextId, 'read', (sql) => {
      const generation = this.session.readGeneration(contextId);
      return generation === undefined
        ? this.edges.among(sql, contextId, memoryIds)
        : this.lists.among(sql, contextId, memoryIds, generation);
    });
  }

  async countEdges(contextId: string): Promise<Record<RelationType, number>> {
    // One round trip (a primary-key read): it follows every add (the ingest report). Inside a unit of the
    // context it waits for the unit's next statement or its COMMIT (an add asks at the unit's end).
    const statement = (literal: string) => EDGE_COUNTS.call(literal);
    type Row = { type: RelationType; n: number };
    const rows = await (this.session.readLater<Row>(contextId, statement) ??
      this.session.scopedOne<Row>(contextId, statement));
    const counts = emptyEdgeCounts();
    for (const row of rows) if (row.type in counts) counts[row.type] = row.n;
    return counts;
  }
}
