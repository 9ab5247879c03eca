/**
 * Versioned schema of the PostgreSQL store (src/store/postgres/postgres-migrate.ts applies it). Never edit a
 * released migration: append a new one.
 *
 * Every per-context table carries `context_id` and gets the row-level security policy of `rlsSql`: rows are
 * visible only to a transaction that set `graphmemix.context_id` to their context (SET LOCAL through
 * set_config(..., true)), or to one that set `graphmemix.all_contexts` to 'on' (the explicit cross-context path
 * of listContexts, listQuestions() and integrityCheck). `meta` is global (calibration) and has no policy.
 *
 * Ids, keys and terms are `COLLATE "C"`: ordering (sequence, id), key ranges and the a < b edge check must
 * follow code-unit order like the SQLite and in-memory backends, whatever the database's locale.
 */

import type pg from 'pg';
import { eventTimeKey } from '../event-time-key.ts';
import { TOKENIZER_VERSION_META } from '../store-rules.ts';
import { reindexPostgresLexical } from './postgres-lexical-index.ts';

export interface PostgresMigration {
  version: number;
  sql: string;
  /** Data work after the SQL, in the same transaction (e.g. reindexing rows written by older code). */
  backfill?: (client: pg.PoolClient) => Promise<void>;
}

/** Tables that hold rows of one context (each gets FORCE ROW LEVEL SECURITY and the context policy). */
export const PER_CONTEXT_TABLES = [
  'contexts',
  'memories',
  'views',
  'edges',
  'edge_counts',
  'vectors',
  'questions',
  'relation_journal',
  'memory_keys',
  'lex_fields',
  'lex_docs',
  'lex_postings',
  'lex_df',
  'semantic_snapshots',
  'semantic_df',
  'semantic_docs',
  'semantic_postings',
  'semantic_neighbours',
  'memory_versions',
  'memory_tags',
  'kind_counts',
] as const;

/** The non-owner role every scoped transaction runs as when the login role would bypass RLS (a superuser). */
export const RLS_ROLE = 'graphmemix_rls';

/** Migration 10's triggers: after each INSERT, UPDATE or DELETE statement on memories and edges. */
const GENERATION_TRIGGERS = ['memories', 'edges']
  .flatMap((table) =>
    (['INSERT', 'UPDATE', 'DELETE'] as const).map((event) => {
      const name = `${table}_generation_${event.toLowerCase()}`;
      const rows = event === 'DELETE' ? 'OLD' : 'NEW';
      return `DROP TRIGGER IF EXISTS ${name} ON ${table};
      CREATE TRIGGER ${name} AFTER ${event} ON ${table}
        REFERENCING ${rows} TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION graphmemix_context_generation();`;
    }),
  )
  .join('\n      ');

export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE meta (key text COLLATE "C" PRIMARY KEY, value text NOT NULL);
      CREATE TABLE contexts (
        id text COLLATE "C" PRIMARY KEY,
        -- kept by every write and delete: listing and counting never walk a context
        memories bigint NOT NULL DEFAULT 0,
        -- bumped on every vector write/delete: readers compare it to drop cached vector indexes
        vector_version bigint NOT NULL DEFAULT 0
      );
      CREATE TABLE memories (
        context_id text COLLATE "C" NOT NULL REFERENCES contexts (id) ON DELETE CASCADE,
        id text COLLATE "C" NOT NULL,
        sequence bigint NOT NULL,
        kind text NOT NULL,
        session_id text,
        round_id text,
        "timestamp" text,
        content_hash text NOT NULL,
        record text NOT NULL,
        PRIMARY KEY (context_id, id)
      );
      CREATE INDEX memories_by_sequence ON memories (context_id, sequence, id);
      CREATE TABLE views (
        context_id text COLLATE "C" NOT NULL,
        memory_id text COLLATE "C" NOT NULL,
        position integer NOT NULL,
        kind text COLLATE "C" NOT NULL,
        key text COLLATE "C" NOT NULL,
        text text NOT NULL,
        uri text,
        PRIMARY KEY (context_id, memory_id, kind, key),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      );
      CREATE TABLE edges (
        context_id text COLLATE "C" NOT NULL,
        a text COLLATE "C" NOT NULL,
        b text COLLATE "C" NOT NULL,
        types text[] NOT NULL,
        strength double precision NOT NULL,
        similarity double precision,
        PRIMARY KEY (context_id, a, b),
        CHECK (a < b),
        FOREIGN KEY (context_id, a) REFERENCES memories (context_id, id) ON DELETE CASCADE,
        FOREIGN KEY (context_id, b) REFERENCES memories (context_id, id) ON DELETE CASCADE
      );
      CREATE INDEX edges_by_b ON edges (context_id, b);
      -- per (context, type), kept by triggers (cascaded deletes included): countEdges is one small read
      CREATE TABLE edge_counts (
        context_id text COLLATE "C" NOT NULL,
        type text COLLATE "C" NOT NULL,
        n bigint NOT NULL,
        PRIMARY KEY (context_id, type)
      );
      CREATE FUNCTION graphmemix_edge_counts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
          UPDATE edge_counts SET n = n - 1 WHERE context_id = OLD.context_id AND type = ANY (OLD.types);
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
          INSERT INTO edge_counts (context_id, type, n)
            SELECT NEW.context_id, t, 1 FROM unnest(NEW.types) AS t ORDER BY t
            ON CONFLICT (context_id, type) DO UPDATE SET n = edge_counts.n + 1;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER edges_count AFTER INSERT OR DELETE OR UPDATE OF types ON edges
        FOR EACH ROW EXECUTE FUNCTION graphmemix_edge_counts();
      CREATE TABLE vectors (
        context_id text COLLATE "C" NOT NULL,
        space text COLLATE "C" NOT NULL,
        memory_id text COLLATE "C" NOT NULL,
        kind text COLLATE "C" NOT NULL,
        key text COLLATE "C" NOT NULL,
        dims integer NOT NULL,
        -- float32 little-endian, the SQLite blob layout (copy between backends is byte for byte)
        vector bytea NOT NULL,
        PRIMARY KEY (context_id, space, memory_id, kind, key),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      );
      CREATE INDEX vectors_by_memory ON vectors (context_id, memory_id);
      CREATE TABLE questions (
        context_id text COLLATE "C" NOT NULL,
        id text COLLATE "C" NOT NULL,
        -- insertion order (an upsert keeps it), the order listQuestions returns
        ord bigserial NOT NULL,
        question text NOT NULL,
        PRIMARY KEY (context_id, id)
      );
      -- no foreign key: an entry outlives the memory it names when that memory was deleted
      CREATE TABLE relation_journal (
        seq bigserial PRIMARY KEY,
        context_id text COLLATE "C" NOT NULL,
        memory_id text COLLATE "C" NOT NULL,
        before text
      );
      CREATE INDEX relation_journal_by_context ON relation_journal (context_id, seq);
      CREATE TABLE memory_keys (
        context_id text COLLATE "C" NOT NULL,
        memory_id text COLLATE "C" NOT NULL,
        key text COLLATE "C" NOT NULL,
        sequence bigint NOT NULL,
        PRIMARY KEY (context_id, key, memory_id),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      );
      CREATE INDEX memory_keys_by_sequence ON memory_keys (context_id, key, sequence, memory_id);
      CREATE INDEX memory_keys_by_memory ON memory_keys (context_id, memory_id);

      -- Lexical index (src/store/postgres/postgres-lexical-index.ts): BM25 statistics per (context, kind)
      CREATE TABLE lex_fields (
        context_id text COLLATE "C" NOT NULL,
        kind text COLLATE "C" NOT NULL,
        docs bigint NOT NULL,
        total_length bigint NOT NULL,
        PRIMARY KEY (context_id, kind)
      );
      CREATE TABLE lex_docs (
        id bigserial PRIMARY KEY,
        context_id text COLLATE "C" NOT NULL,
        kind text COLLATE "C" NOT NULL,
        memory_id text COLLATE "C" NOT NULL,
        key text COLLATE "C" NOT NULL,
        length integer NOT NULL,
        -- forward list (dictionary keys and tfs): a delete decrements df without reading postings
        terms text[] COLLATE "C" NOT NULL,
        tfs integer[] NOT NULL,
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      );
      CREATE INDEX lex_docs_by_memory ON lex_docs (context_id, memory_id);
      CREATE TABLE lex_postings (
        context_id text COLLATE "C" NOT NULL,
        kind text COLLATE "C" NOT NULL,
        term text COLLATE "C" NOT NULL,
        doc bigint NOT NULL REFERENCES lex_docs (id) ON DELETE CASCADE,
        tf integer NOT NULL,
        length integer NOT NULL,
        memory_id text COLLATE "C" NOT NULL,
        key text COLLATE "C" NOT NULL,
        -- covering: a search ranks a term's postings (tie-break on memory id, key included) from the index alone
        PRIMARY KEY (context_id, kind, term, doc) INCLUDE (tf, length, memory_id, key)
      );
      CREATE INDEX lex_postings_by_doc ON lex_postings (doc);
      CREATE TABLE lex_df (
        context_id text COLLATE "C" NOT NULL,
        kind text COLLATE "C" NOT NULL,
        term text COLLATE "C" NOT NULL,
        df bigint NOT NULL,
        PRIMARY KEY (context_id, kind, term)
      );

      -- Semantic kNN state (docs/semantic-knn.md), the tables of SQLite migration 5
      CREATE TABLE semantic_snapshots (
        context_id text COLLATE "C" PRIMARY KEY REFERENCES contexts (id) ON DELETE CASCADE,
        space text NOT NULL,
        documents bigint NOT NULL,
        k integer NOT NULL,
        created_at text NOT NULL,
        changes bigint NOT NULL DEFAULT 0
      );
      CREATE TABLE semantic_df (
        context_id text COLLATE "C" NOT NULL,
        term text COLLATE "C" NOT NULL,
        df bigint NOT NULL,
        PRIMARY KEY (context_id, term)
      );
      CREATE TABLE semantic_docs (
        context_id text COLLATE "C" NOT NULL,
        memory_id text COLLATE "C" NOT NULL,
        threshold double precision NOT NULL,
        PRIMARY KEY (context_id, memory_id),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      );
      CREATE TABLE semantic_postings (
        context_id text COLLATE "C" NOT NULL,
        memory_id text COLLATE "C" NOT NULL,
        term text COLLATE "C" NOT NULL,
        weight double precision NOT NULL,
        ratio double precision NOT NULL,
        PRIMARY KEY (context_id, memory_id, term),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      );
      CREATE INDEX semantic_postings_by_weight ON semantic_postings (context_id, term, weight DESC, memory_id);
      CREATE INDEX semantic_postings_by_ratio ON semantic_postings (context_id, term, ratio, weight);
      CREATE TABLE semantic_neighbours (
        context_id text COLLATE "C" NOT NULL,
        memory_id text COLLATE "C" NOT NULL,
        rank integer NOT NULL,
        neighbour_id text COLLATE "C" NOT NULL,
        score double precision NOT NULL,
        PRIMARY KEY (context_id, memory_id, rank),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      );
      CREATE INDEX semantic_neighbours_by_neighbour ON semantic_neighbours (context_id, neighbour_id);

    `,
  },
  {
    // Version 2: memory history, scope tags (filters), kept per-kind counts and the last write (issue #15;
    // the same tables as SQLite migration 6). History and tags cascade from memories: forget means forget.
    version: 2,
    sql: `
      CREATE TABLE memory_versions (
        context_id text COLLATE "C" NOT NULL,
        memory_id text COLLATE "C" NOT NULL,
        version integer NOT NULL,
        recorded_at text,
        record text NOT NULL,
        PRIMARY KEY (context_id, memory_id, version),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      );
      CREATE TABLE memory_tags (
        context_id text COLLATE "C" NOT NULL,
        name text COLLATE "C" NOT NULL,
        value text COLLATE "C" NOT NULL,
        memory_id text COLLATE "C" NOT NULL,
        PRIMARY KEY (context_id, name, value, memory_id),
        FOREIGN KEY (context_id, memory_id) REFERENCES memories (context_id, id) ON DELETE CASCADE
      );
      CREATE INDEX memory_tags_by_memory ON memory_tags (context_id, memory_id);
      CREATE INDEX memories_by_time ON memories (context_id, "timestamp");
      CREATE TABLE kind_counts (
        context_id text COLLATE "C" NOT NULL,
        kind text COLLATE "C" NOT NULL,
        n bigint NOT NULL,
        PRIMARY KEY (context_id, kind)
      );
      INSERT INTO kind_counts (context_id, kind, n) SELECT context_id, kind, count(*) FROM memories GROUP BY 1, 2;
      CREATE FUNCTION graphmemix_kind_counts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
          UPDATE kind_counts SET n = n - 1 WHERE context_id = OLD.context_id AND kind = OLD.kind;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
          INSERT INTO kind_counts (context_id, kind, n) VALUES (NEW.context_id, NEW.kind, 1)
            ON CONFLICT (context_id, kind) DO UPDATE SET n = kind_counts.n + 1;
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER memories_kind_count AFTER INSERT OR DELETE OR UPDATE OF kind ON memories
        FOR EACH ROW EXECUTE FUNCTION graphmemix_kind_counts();
      ALTER TABLE contexts ADD COLUMN last_write text;
    `,
  },
  {
    // Top-k pruning of lexical search (postgres-lexical-search.ts): each posting carries its impact, the BM25
    // tf-part at the field's fixed reference length, and a term's postings are indexed in impact order. The
    // owner is subject to FORCE ROW LEVEL SECURITY, so the backfill lifts FORCE for its own statements; every
    // migrate run re-applies the policies afterwards (rlsSql).
    version: 3,
    sql: `
      ALTER TABLE lex_fields NO FORCE ROW LEVEL SECURITY;
      ALTER TABLE lex_postings NO FORCE ROW LEVEL SECURITY;
      ALTER TABLE lex_fields ADD COLUMN reference_length double precision;
      UPDATE lex_fields SET reference_length = total_length::double precision / docs WHERE docs > 0;
      ALTER TABLE lex_postings ADD COLUMN impact double precision;
      UPDATE lex_postings p SET impact = p.tf * 2.2 / (p.tf + 1.2 * (0.25 + 0.75 * p.length / f.reference_length))
        FROM lex_fields f WHERE f.context_id = p.context_id AND f.kind = p.kind AND f.reference_length > 0;
      -- No usable field row (cannot happen through the store): the largest tf-part any posting can have.
      UPDATE lex_postings SET impact = 2.2 WHERE impact IS NULL;
      ALTER TABLE lex_postings ALTER COLUMN impact SET NOT NULL;
      -- Read backwards (impact DESC, doc DESC) with a keyset (impact, doc) < (last read): a term's best
      -- postings first. It replaces the primary key (one index per posting keeps add-1 cheap); a view's
      -- distinct terms make (context, kind, term, doc) unique by construction.
      ALTER TABLE lex_postings DROP CONSTRAINT lex_postings_pkey;
      CREATE INDEX lex_postings_by_impact ON lex_postings (context_id, kind, term, impact, doc)
        INCLUDE (tf, length, memory_id, key);
    `,
  },
  {
    // Version 4: terms of TOKENIZER_VERSION 2 (plural folding; src/retrieval/tokenize.ts), as SQLite
    // migration 7: the lexical index is rebuilt from the views (reindexPostgresLexical) and every context is
    // marked for a relation upgrade (relation keys, semantic IDF snapshot, kNN lists, edges rebuilt by
    // `graphmemix migrate` or its next relation update). The version is a literal on purpose (see SQLite 7).
    version: 4,
    sql: `
      SELECT set_config('graphmemix.all_contexts', 'on', true);
      INSERT INTO meta (key, value) SELECT 'relations-upgrade:' || id, 'true' FROM contexts
        ON CONFLICT (key) DO UPDATE SET value = excluded.value;
      INSERT INTO meta (key, value) VALUES ('${TOKENIZER_VERSION_META}', '2')
        ON CONFLICT (key) DO UPDATE SET value = excluded.value;
    `,
    backfill: reindexPostgresLexical,
  },
  {
    // Version 5: pending media digests across contexts through one partial index (the same as SQLite
    // migration 8; ArchiveStore.listPendingMedia), so opening an archive never lists its contexts.
    version: 5,
    sql: `
      CREATE INDEX IF NOT EXISTS memory_keys_media_pending ON memory_keys (context_id, memory_id)
        WHERE key = 'media-status:pending';
    `,
  },
  {
    // Version 6: cheaper kNN updates (issue #11, add-1 into a 10k context; the same choice as SQLite
    // migration 9). Each document keeps its vector and its list in its own row (JSON [terms, weights] and
    // [neighbour ids, scores]), so reading a candidate is one row, not one per term and entry (getDocs was the
    // largest statement of an add). Ratios are computed from semantic_docs.threshold when the exact reverse
    // search asks, so a list change writes its document row, not the ratio of every posting of its memory
    // (the ratio column stays, unmaintained; its index goes). The owner is subject to FORCE ROW LEVEL
    // SECURITY: the backfill reads every context and lifts FORCE on the table it updates; every migrate run
    // re-applies the policies afterwards (rlsSql). Re-runnable (IF EXISTS / IF NOT EXISTS, the backfill only
    // fills NULLs, and is planned only then: after version 9 its rank column is gone).
    version: 6,
    sql: `
      SELECT set_config('graphmemix.all_contexts', 'on', true);
      ALTER TABLE semantic_docs NO FORCE ROW LEVEL SECURITY;
      DROP INDEX IF EXISTS semantic_postings_by_ratio;
      ALTER TABLE semantic_docs ADD COLUMN IF NOT EXISTS vector text, ADD COLUMN IF NOT EXISTS list text;
      -- In a DO block: planned only when a row needs it (a re-run after version 9 has no rank column).
      DO $$
      BEGIN
        IF EXISTS (SELECT 1 FROM semantic_docs WHERE vector IS NULL OR list IS NULL) THEN
          UPDATE semantic_docs d SET
            vector = json_build_array(
              coalesce((SELECT json_agg(p.term ORDER BY p.term) FROM semantic_postings p
                        WHERE p.context_id = d.context_id AND p.memory_id = d.memory_id), '[]'::json),
              coalesce((SELECT json_agg(p.weight ORDER BY p.term) FROM semantic_postings p
                        WHERE p.context_id = d.context_id AND p.memory_id = d.memory_id), '[]'::json))::text,
            list = json_build_array(
              coalesce((SELECT json_agg(n.neighbour_id ORDER BY n.rank) FROM semantic_neighbours n
                        WHERE n.context_id = d.context_id AND n.memory_id = d.memory_id), '[]'::json),
              coalesce((SELECT json_agg(n.score ORDER BY n.rank) FROM semantic_neighbours n
                        WHERE n.context_id = d.context_id AND n.memory_id = d.memory_id), '[]'::json))::text
            WHERE d.vector IS NULL OR d.list IS NULL;
        END IF;
      END $$;
      ALTER TABLE semantic_docs ALTER COLUMN vector SET NOT NULL, ALTER COLUMN list SET NOT NULL;
    `,
  },
  {
    // Version 7: edge counts per statement (issue #11, ingest): the row trigger ran an upsert per edge (a
    // context's relation build writes thousands in one statement). Statement triggers with transition
    // tables add each statement's net delta per (context, type) in one upsert; one trigger per event (a
    // trigger with transition tables takes one event). Cascaded deletes are statements too. Re-runnable.
    version: 7,
    sql: `
      CREATE OR REPLACE FUNCTION graphmemix_edge_counts_added() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO edge_counts (context_id, type, n)
          SELECT context_id, t, count(*) FROM added, unnest(types) AS t GROUP BY 1, 2 ORDER BY 1, 2
          ON CONFLICT (context_id, type) DO UPDATE SET n = edge_counts.n + excluded.n;
        RETURN NULL;
      END $$;
      CREATE OR REPLACE FUNCTION graphmemix_edge_counts_removed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE edge_counts c SET n = c.n - d.n
          FROM (SELECT context_id, t AS type, count(*) AS n FROM removed, unnest(types) AS t GROUP BY 1, 2) d
          WHERE c.context_id = d.context_id AND c.type = d.type;
        RETURN NULL;
      END $$;
      CREATE OR REPLACE FUNCTION graphmemix_edge_counts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO edge_counts (context_id, type, n)
          SELECT context_id, t, sum(d) FROM (
            SELECT context_id, t, 1 AS d FROM added, unnest(types) AS t
            UNION ALL SELECT context_id, t, -1 FROM removed, unnest(types) AS t) x
          GROUP BY 1, 2 HAVING sum(d) <> 0 ORDER BY 1, 2
          ON CONFLICT (context_id, type) DO UPDATE SET n = edge_counts.n + excluded.n;
        RETURN NULL;
      END $$;
      DROP TRIGGER IF EXISTS edges_count ON edges;
      DROP TRIGGER IF EXISTS edges_count_insert ON edges;
      DROP TRIGGER IF EXISTS edges_count_delete ON edges;
      DROP TRIGGER IF EXISTS edges_count_update ON edges;
      CREATE TRIGGER edges_count_insert AFTER INSERT ON edges REFERENCING NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION graphmemix_edge_counts_added();
      CREATE TRIGGER edges_count_delete AFTER DELETE ON edges REFERENCING OLD TABLE AS removed
        FOR EACH STATEMENT EXECUTE FUNCTION graphmemix_edge_counts_removed();
      CREATE TRIGGER edges_count_update AFTER UPDATE ON edges REFERENCING OLD TABLE AS removed NEW TABLE AS added
        FOR EACH STATEMENT EXECUTE FUNCTION graphmemix_edge_counts_changed();
      DROP FUNCTION IF EXISTS graphmemix_edge_counts();
    `,
  },
  {
    // Version 8: no foreign-key check per posting and per list entry (issue #11, ingest). Each row of
    // lex_postings checked its lex_docs row, and each of semantic_postings / semantic_neighbours its
    // memory: one lookup and row lock per row, ~20% of the server's CPU in a bulk ingest. Those rows are
    // written in the same statement as their parent (lex_docs / semantic_docs, which keep their keys), so
    // the check could never fail; their deletes are explicit where the cascade did them (the lexical remove,
    // deleteMemory, deleteContext). Re-runnable.
    version: 8,
    sql: `
      ALTER TABLE lex_postings DROP CONSTRAINT IF EXISTS lex_postings_doc_fkey;
      ALTER TABLE semantic_postings DROP CONSTRAINT IF EXISTS semantic_postings_context_id_memory_id_fkey;
      ALTER TABLE semantic_neighbours DROP CONSTRAINT IF EXISTS semantic_neighbours_context_id_memory_id_fkey;
    `,
  },
  {
    // Version 9: semantic_neighbours is the set of (list owner, neighbour) pairs (issue #11, add-1). Since
    // version 6 the lists themselves live in semantic_docs.list; this table only answers `referrers` (which
    // lists name a memory). Keyed by rank, a newcomer entering a list moved every entry below it (~30 row
    // updates per add-1 at 10k, each a new row version with two index entries); as pairs it is one insert and
    // at most one delete per list it enters. The owner is subject to FORCE ROW LEVEL SECURITY: lifted for
    // the duplicate check (a list names a neighbour once, so it deletes nothing), re-applied by every
    // migrate run (rlsSql). Re-runnable.
    version: 9,
    sql: `
      SELECT set_config('graphmemix.all_contexts', 'on', true);
      ALTER TABLE semantic_neighbours NO FORCE ROW LEVEL SECURITY;
      DO $$
      BEGIN
        IF EXISTS (SELECT 1 FROM information_schema.columns
                   WHERE table_schema = current_schema() AND table_name = 'semantic_neighbours'
                     AND column_name = 'rank') THEN
          DELETE FROM semantic_neighbours a USING semantic_neighbours b
            WHERE a.context_id = b.context_id AND a.memory_id = b.memory_id
              AND a.neighbour_id = b.neighbour_id AND a.rank > b.rank;
          ALTER TABLE semantic_neighbours DROP CONSTRAINT IF EXISTS semantic_neighbours_pkey;
          ALTER TABLE semantic_neighbours DROP COLUMN rank, DROP COLUMN IF EXISTS score;
          ALTER TABLE semantic_neighbours ADD PRIMARY KEY (context_id, memory_id, neighbour_id);
        END IF;
      END $$;
    `,
  },
  {
    // Version 10: a read generation per context (PostgresSession.readUnit, issue #11's retrieve). Every
    // statement that changes a context's memories or edges, from any process or client, moves the context's
    // generation to a fresh value of a sequence (statement triggers with transition tables: one UPDATE per
    // statement, not per row); a question's read unit reads it with its BEGIN, and the question path keeps
    // what it read under one generation (records: src/pipeline/pool-records.ts; whether the context has
    // supersedes edges) for later questions that see the same generation. A sequence, not a counter: a
    // context deleted and created again never repeats a generation. Writes of memories and edges pass the
    // tables' WITH CHECK (their context is the transaction's), so the trigger's UPDATE of that context's row
    // does too. A transaction moves a context's generation once (the function remembers it in a
    // transaction-local setting): an add's later edge statements leave the row alone. Re-runnable.
    version: 10,
    sql: `
      CREATE SEQUENCE IF NOT EXISTS context_generations;
      ALTER TABLE contexts ADD COLUMN IF NOT EXISTS generation bigint NOT NULL
        DEFAULT nextval('context_generations');
      CREATE OR REPLACE FUNCTION graphmemix_context_generation() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        moved text := coalesce(current_setting('graphmemix.generation_moved', true), '');
        single text;
      BEGIN
        -- Once per transaction and context: readers see the state before it or after its commit, never
        -- between, so the later statements of an add need no new row version of the context.
        IF moved <> '' AND NOT EXISTS (SELECT 1 FROM changed WHERE context_id <> moved) THEN
          RETURN NULL;
        END IF;
        UPDATE contexts SET generation = nextval('context_generations')
          WHERE id IN (SELECT DISTINCT context_id FROM changed);
        SELECT min(context_id) INTO single FROM changed HAVING min(context_id) = max(context_id);
        -- Transaction-local: reset at COMMIT or ROLLBACK (and by a rolled-back savepoint).
        IF single IS NOT NULL THEN PERFORM set_config('graphmemix.generation_moved', single, true); END IF;
        RETURN NULL;
      END $$;
      ${GENERATION_TRIGGERS}
    `,
  },
  {
    // Version 11: a scope tag's row carries its memory's sequence, and the key orders a tag's rows by (sequence,
    // memory id), as SQLite's migration 13: a filtered page walks one tag's rows from its keyset position to its
    // LIMIT (filter-plan.ts). Rows written before get their memory's sequence once, here. Re-runnable.
    version: 11,
    sql: `
      ALTER TABLE memory_tags ADD COLUMN IF NOT EXISTS sequence bigint;
      UPDATE memory_tags t SET sequence = m.sequence FROM memories m
        WHERE m.context_id = t.context_id AND m.id = t.memory_id AND t.sequence IS DISTINCT FROM m.sequence;
      ALTER TABLE memory_tags ALTER COLUMN sequence SET NOT NULL;
      ALTER TABLE memory_tags DROP CONSTRAINT IF EXISTS memory_tags_pkey;
      ALTER TABLE memory_tags ADD CONSTRAINT memory_tags_pkey
        PRIMARY KEY (context_id, name, value, sequence, memory_id);
    `,
  },
  {
    // Version 12: the indexed event time of a memory with a numeric UTC offset is the same instant in UTC, as
    // SQLite's migration 16 (event-time-key.ts). The owner is subject to FORCE ROW LEVEL SECURITY: lifted on
    // memories for the backfill, re-applied by every migrate run (rlsSql). Re-runnable.
    version: 12,
    sql: `
      SELECT set_config('graphmemix.all_contexts', 'on', true);
      ALTER TABLE memories NO FORCE ROW LEVEL SECURITY;
    `,
    backfill: utcEventTimes,
  },
  {
    // Version 13: the media reference keys of every context in one partial index, as SQLite's migration 17
    // (ArchiveStore.heldMediaKeys: a delete's media check without a probe per context).
    version: 13,
    sql: `
      CREATE INDEX IF NOT EXISTS memory_keys_media_refs ON memory_keys (key)
        WHERE key >= 'media:' AND key < 'media;';
    `,
  },
];

/** Version 12: memories whose indexed time carries an offset get its UTC form. */
async function utcEventTimes(client: pg.PoolClient): Promise<void> {
  const rows = await client.query<{ context_id: string; id: string; timestamp: string }>(
    `SELECT context_id, id, "timestamp" FROM memories WHERE "timestamp" ~ '[0-9][+-][0-9]{2}:?[0-9]{2}$'`,
  );
  const changed = rows.rows
    .map((row) => ({ ...row, key: eventTimeKey(row.timestamp) }))
    .filter((row) => row.key !== row.timestamp);
  for (let i = 0; i < changed.length; i += 1000) {
    const part = changed.slice(i, i + 1000);
    await client.query(
      `UPDATE memories m SET "timestamp" = u.key
       FROM unnest($1::text[], $2::text[], $3::text[]) AS u(context_id, id, key)
       WHERE m.context_id = u.context_id AND m.id = u.id`,
      [part.map((row) => row.context_id), part.map((row) => row.id), part.map((row) => row.key)],
    );
  }
}

export const POSTGRES_SCHEMA_VERSION = POSTGRES_MIGRATIONS[POSTGRES_MIGRATIONS.length - 1]!.version;

/**
 * Row-level security for every per-context table (re-applied by every migrate run, idempotent): FORCE makes
 * the table owner subject to it too; the policy admits the transaction's context only, or every context on
 * the explicit cross-context path. The settings are read in scalar subqueries, evaluated once per statement
 * (an InitPlan) instead of once per row: a search over 10k postings otherwise spent much of its time there.
 */
export function rlsSql(): string {
  return PER_CONTEXT_TABLES.map((table) => {
    const column = table === 'contexts' ? 'id' : 'context_id';
    return `
      ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
      ALTER TABLE ${table} FORCE ROW LEVEL SECURITY;
      DROP POLICY IF EXISTS context_isolation ON ${table};
      CREATE POLICY context_isolation ON ${table}
        USING (${column} = (SELECT current_setting('graphmemix.context_id', true))
          OR (SELECT current_setting('graphmemix.all_contexts', true)) = 'on')
        WITH CHECK (${column} = (SELECT current_setting('graphmemix.context_id', true)));`;
  }).join('\n');
}
