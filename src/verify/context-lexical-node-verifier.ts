import { UnionFind } from '../core/union-find.ts';
import { bm25TermScore } from '../retrieval/bm25-index.ts';
import {
  startTermBatch,
  type TermVector,
  termCount,
  termId,
  termVectorCached,
  tokenizeCached,
} from '../retrieval/token-cache.ts';
import type { AssetKind, MemoryRecord } from '../types/memory-record.ts';
import type { SchemaRelationType } from '../types/relation.ts';
import { recordFullText } from './candidate-snippet.ts';
import type {
  NodeVerifier,
  NodeVerifierInput,
  NodeVerifierResult,
  PoolRelation,
} from './node-verifier-spec.ts';

/**
 * Relations that make two memories one unit of evidence: the two halves of a dialogue round, one email thread,
 * the versions of one fact (supersedes: the old statement names what the update changes). A unit is read as a
 * whole (a reply is judged with the message it answers).
 */
export const UNIT_RELATIONS: ReadonlySet<SchemaRelationType> = new Set([
  'same_round',
  'same_record',
  'supersedes',
]);
/** Relations that place a unit in its immediate context: the neighbouring turns of a session, a photo burst. */
export const CONTEXT_RELATIONS: ReadonlySet<SchemaRelationType> = new Set([
  'consecutive_turn',
  'event_bridge',
]);
/**
 * Weight of the neighbouring units' mean support. Conversations keep a topic over several turns (70% of
 * Mem-Gallery's gold rounds sit next to another gold round), so a turn between strongly matching ones is
 * more likely relevant than an isolated lexical match. Fitted on the dev fold (fold 0) only, with the
 * offline ranker refitted for each value: 1 / 1.25 / 1.5 / 2 gave a fold-0 graphmemix Recall@10 (mean of
 * Mem-Gallery and M3Exam, both shapes) of 66.21 / 66.66 / 67.46 / 66.99 (docs/offline-verifiers.md, third
 * round).
 */
export const CONTEXT_WEIGHT = 1.5;

/**
 * Offline node verifier `lexical-context-support` (no model). Lexical support of the question (prompt,
 * options, and the question images' captions) by a memory read in its context:
 *   unit(i)    = BM25-style support of the memory's UNIT (the memory with its same_round / same_record
 *                partners in the pool, read as one document): per question term a rarity weight times a
 *                saturating term frequency, length-normalised, divided by the sum of the rarity weights;
 *   context(i) = the mean unit support of the units adjacent to i's unit (consecutive_turn / event_bridge;
 *                neighbours outside the pool count as unsupported);
 *   v_i        = 5 x (unit(i) + CONTEXT_WEIGHT x context(i)) / the best such value in the pool (listwise).
 * Rarity weights are ln(1 + N / df) over the pool's units, so a term every unit shares says little. It
 * measures lexical support only: it cannot read negation or time, which is why it is named for what it is.
 */
export function createContextLexicalNodeVerifier(): NodeVerifier {
  return {
    specificationVersion: 'v1',
    name: 'lexical-context-support',
    kind: 'offline',
    async verify(input: NodeVerifierInput): Promise<NodeVerifierResult> {
      return {
        ok: true,
        scores: contextSupportScores(
          verifierQueryText(input.question),
          input.candidates.map((c) => ({ id: c.memoryId, text: verifierDocumentText(c.record) })),
          input.relations ?? [],
        ),
      };
    },
  };
}

/** The question as the offline verifiers read it: prompt, options and the question images' captions. */
export function verifierQueryText(question: NodeVerifierInput['question']): string {
  return [question.prompt, ...(question.choices ?? []).map((c) => c.text), ...question.imageCaptions].join(
    '\n',
  );
}

/**
 * Words a question uses for each kind of media. The model verifiers see a candidate's modalities in their
 * payload (method notes 4); the offline verifiers read them as these words, so "which photo shows ..." is
 * supported by memories that carry a photo, and a reply in the photo's round (one unit) shares it.
 */
export const MODALITY_WORDS: Readonly<Record<AssetKind, string>> = {
  image: 'image photo picture photograph pic',
  video: 'video clip footage',
  audio: 'audio recording voice',
  document: 'document file attachment',
};

/**
 * A memory as the offline verifiers read it: every text route (recordFullText), the words for its media
 * (MODALITY_WORDS, once per kind), and the calendar date it was written or taken, so a question that names
 * a day ("what did I show on 2024-06-17") is supported by that day's memories (the model verifiers see the
 * modalities and the date in their payload too).
 */
export function verifierDocumentText(record: MemoryRecord): string {
  let text = documentTexts.get(record);
  if (text !== undefined) return text;
  const parts = [recordFullText(record)];
  for (const kind of new Set(record.assets.map((a) => a.kind))) parts.push(MODALITY_WORDS[kind]);
  const day = record.timestamp === undefined ? undefined : /^\d{4}-\d{2}-\d{2}/.exec(record.timestamp)?.[0];
  if (day !== undefined) parts.push(day);
  text = parts.join('\n');
  documentTexts.set(record, text);
  return text;
}

/** verifierDocumentText by record object (read-only records, as recordFullText's memo: candidate-snippet.ts). */
const documentTexts = new WeakMap<MemoryRecord, string>();

/** The scoring rule on plain data (exported for tests). */
export function contextSupportScores(
  question: string,
  documents: readonly { id: string; text: string }[],
  relations: readonly PoolRelation[],
): Map<string, number> {
  const parts = contextSupportParts(question, documents, relations);
  const raw = documents.map(({ id }) => {
    const { unit, context } = parts.get(id)!;
    return unit + CONTEXT_WEIGHT * context;
  });
  const best = Math.max(0, ...raw);
  const scores = new Map<string, number>();
  documents.forEach(({ id }, index) => {
    scores.set(id, best > 0 ? Math.round((50 * raw[index]!) / best) / 10 : 0);
  });
  return scores;
}

/**
 * The two parts of the score per document: its unit's support, and the mean support of the adjacent units
 * (over at least both sides; a neighbour outside the pool counts as unsupported, so one strong neighbour
 * lifts a unit half as much as two). Also read by the offline ranker as separate features.
 */
export function contextSupportParts(
  question: string,
  documents: readonly { id: string; text: string }[],
  relations: readonly PoolRelation[],
): ReadonlyMap<string, SupportParts> {
  // The node verifier and then the ranker ask for the same pool in context (the ranker also alone).
  for (const kept of keptParts) {
    if (
      kept.question === question &&
      sameItems(kept.relations, relations) &&
      sameDocuments(kept.documents, documents)
    )
      return kept.parts;
  }
  const parts = computeSupportParts(question, documents, relations);
  keptParts.unshift({
    question,
    documents: documents.map((d) => ({ id: d.id, text: d.text })),
    relations: [...relations],
    parts,
  });
  keptParts.length = Math.min(keptParts.length, KEPT_PARTS);
  return parts;
}

/** A document's two parts of the score, and the best adjacent unit's support (the ranker's features). */
export interface SupportParts {
  unit: number;
  context: number;
  bestAdjacent: number;
}

/**
 * The latest contextSupportParts answers, newest first, by their inputs (copied): the same question text,
 * the same relation objects in the same order (the pool's, shared by the verifier and the ranker) and
 * documents equal id by id and text by text. The maps are shared: callers only read them.
 */
const keptParts: {
  question: string;
  documents: { id: string; text: string }[];
  relations: readonly PoolRelation[];
  parts: ReadonlyMap<string, SupportParts>;
}[] = [];
/** Answers kept: the verifier's, then the ranker's pool alone, come before the ranker's pool in context. */
const KEPT_PARTS = 2;

function sameItems<T>(x: readonly T[], y: readonly T[]): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

function sameDocuments(
  x: readonly { id: string; text: string }[],
  y: readonly { id: string; text: string }[],
): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i]!.id !== y[i]!.id || x[i]!.text !== y[i]!.text) return false;
  return true;
}

function computeSupportParts(
  question: string,
  documents: readonly { id: string; text: string }[],
  relations: readonly PoolRelation[],
): Map<string, SupportParts> {
  const support = unitSupport(question, documents, relations);
  const neighbours = adjacency(relations, CONTEXT_RELATIONS, support.unitOf);
  const parts = new Map<string, SupportParts>();
  for (const { id } of documents) {
    const unit = support.unitOf.get(id)!;
    // Summed and maxed in the adjacency's order, as a reduce and Math.max(0, ...values) would (no arrays).
    let sum = 0;
    let best = 0;
    let count = 0;
    const adjacent = neighbours.get(unit);
    if (adjacent !== undefined) {
      for (const u of adjacent) {
        const value = support.byUnit[u] ?? 0;
        sum += value;
        best = Math.max(best, value);
        count++;
      }
    }
    parts.set(id, { unit: support.byUnit[unit] ?? 0, context: sum / Math.max(2, count), bestAdjacent: best });
  }
  return parts;
}

export interface UnitSupport {
  /** Unit index of each document id (units are the connected components of the unit relations). */
  unitOf: Map<string, number>;
  /** BM25-style support of each unit, in [0, k1 + 1). */
  byUnit: number[];
}

/**
 * Groups documents into units (connected by same_round / same_record) and scores each unit as one document
 * against the question terms: sum_t w_t * tf (k1 + 1) / (tf + k1 (1 - b + b len / avglen)) / sum_t w_t, with
 * w_t = ln(1 + (N + 1) / (df_t + 1)) over the N units. Saturation keeps a term repeated five times from
 * outweighing a second, different question term; the length factor keeps long units from winning by size.
 */
export function unitSupport(
  question: string,
  documents: readonly { id: string; text: string }[],
  relations: readonly PoolRelation[],
): UnitSupport {
  // Cached: one question runs this four times (node verifier, ranker twice, edge verifier).
  const terms = [...new Set(tokenizeCached(question))];
  const unitOf = groupUnits(documents, relations);
  let lastUnit = 0;
  for (const unit of unitOf.values()) lastUnit = Math.max(lastUnit, unit);
  const unitCount = lastUnit + (documents.length > 0 ? 1 : 0);
  // Only the question's terms are counted (one slot each, question order): a unit's full term-frequency map
  // was built four times per question (node verifier, ranker twice, edge verifier) for these few lookups.
  // Flat per-unit rows (unit * width + term): one array, not one per unit (this runs three times a question).
  const width = terms.length;
  const counted = questionCounts(terms);
  // Texts are counted from their term vectors (made once per text), against the terms' ids of this batch.
  startTermBatch();
  const ids = terms.map(termId);
  const tf = new Uint32Array(unitCount * width);
  const length = new Array<number>(unitCount).fill(0);
  for (const document of documents) {
    const unit = unitOf.get(document.id)!;
    let own = counted.byText.get(document.text);
    if (own === undefined) {
      own = termCounts(termVectorCached(document.text), ids);
      counted.byText.set(document.text, own);
    }
    for (let at = 0; at < width; at++) tf[unit * width + at]! += own.counts[at]!;
    length[unit]! += own.length;
  }
  const averageLength = Math.max(1, length.reduce((sum, n) => sum + n, 0) / Math.max(1, unitCount));
  const weights = new Float64Array(width);
  let total = 0;
  for (let t = 0; t < width; t++) {
    let df = 0;
    for (let unit = 0; unit < unitCount; unit++) if (tf[unit * width + t]! > 0) df++;
    weights[t] = Math.log(1 + (unitCount + 1) / (df + 1));
    total += weights[t]!;
  }
  const byUnit = new Array<number>(unitCount);
  for (let unit = 0; unit < unitCount; unit++) {
    let sum = 0;
    if (total > 0) {
      for (let t = 0; t < width; t++) {
        const f = tf[unit * width + t]!;
        // The one BM25 term expression (k1 = 1.2, b = 0.75), with this verifier's rarity weight as the idf.
        if (f > 0) sum += bm25TermScore(weights[t]!, f, length[unit]!, averageLength);
      }
      sum /= total;
    }
    byUnit[unit] = sum;
  }
  return { unitOf, byUnit };
}

/** A document's counts of the question's terms (question order) and its length in tokens. */
interface TermCounts {
  counts: Uint32Array;
  length: number;
}

function termCounts(vector: TermVector, ids: readonly number[]): TermCounts {
  const counts = new Uint32Array(ids.length);
  for (let at = 0; at < ids.length; at++) counts[at] = termCount(vector, ids[at]!);
  return { counts, length: vector.length };
}

/**
 * The documents' term counts for the latest question's terms: one question runs unitSupport four times over
 * the same pool texts (node verifier, the ranker alone and in context, the edge verifier), and each run
 * scanned every token of every text again. Kept for one terms list at a time (another question's terms
 * start afresh), so it holds at most the texts of the questions in flight; counts are a function of the
 * terms and the text, so a hit is exact.
 */
let latestCounts: { key: string; byText: Map<string, TermCounts> } = { key: '', byText: new Map() };
/** Texts counted per terms list at most (a pool has ~50-100; a larger caller just starts over). */
const MAX_COUNTED_TEXTS = 4096;

function questionCounts(terms: readonly string[]): { byText: Map<string, TermCounts> } {
  const key = terms.join('\u0000');
  if (latestCounts.key !== key || latestCounts.byText.size >= MAX_COUNTED_TEXTS)
    latestCounts = { key, byText: new Map() };
  return latestCounts;
}

/**
 * Connected components over the unit relations; units numbered in order of first appearance (a repeated id
 * keeps its last position's unit, as a Map built from the list would).
 */
function groupUnits(
  documents: readonly { id: string }[],
  relations: readonly PoolRelation[],
): Map<string, number> {
  const index = new Map<string, number>();
  for (let i = 0; i < documents.length; i++) index.set(documents[i]!.id, i);
  const sets = new UnionFind(documents.length);
  for (const relation of relations) {
    if (!hasAny(relation.types, UNIT_RELATIONS)) continue;
    const a = index.get(relation.a);
    const b = index.get(relation.b);
    if (a !== undefined && b !== undefined) sets.union(a, b);
  }
  // Units are numbered by their first member in `documents` order, so they do not depend on relation order.
  const numberOf = new Int32Array(documents.length).fill(-1);
  let units = 0;
  const unitOf = new Map<string, number>();
  for (let i = 0; i < documents.length; i++) {
    const root = sets.find(i);
    if (numberOf[root] === -1) numberOf[root] = units++;
    unitOf.set(documents[i]!.id, numberOf[root]!);
  }
  return unitOf;
}

function hasAny(types: readonly SchemaRelationType[], wanted: ReadonlySet<SchemaRelationType>): boolean {
  for (const type of types) if (wanted.has(type)) return true;
  return false;
}

/** Unit-level adjacency over the given relation types (a unit is never its own neighbour). */
function adjacency(
  relations: readonly PoolRelation[],
  types: ReadonlySet<SchemaRelationType>,
  unitOf: ReadonlyMap<string, number>,
): Map<number, Set<number>> {
  const map = new Map<number, Set<number>>();
  for (const relation of relations) {
    if (!hasAny(relation.types, types)) continue;
    const ua = unitOf.get(relation.a);
    const ub = unitOf.get(relation.b);
    if (ua === undefined || ub === undefined || ua === ub) continue;
    if (!map.has(ua)) map.set(ua, new Set());
    if (!map.has(ub)) map.set(ub, new Set());
    map.get(ua)!.add(ub);
    map.get(ub)!.add(ua);
  }
  return map;
}
