import { type EdgeRole, POSITIVE_ROLES } from '../core/candidate-graph.ts';
import type { ChatMessage } from '../providers/model-spec.ts';
import { type ParseResult, parseJsonObject } from '../providers/structured-call.ts';
import { supersessionOrder } from '../types/supersession.ts';
import { candidateSnippet, locationText } from './candidate-snippet.ts';
import type { EdgeJudgement, EdgeVerifierInput, EligibleRelation } from './edge-verifier-spec.ts';
import { candidatePayload, questionPayload, questionText } from './node-verifier-protocol.ts';

export const EDGE_ROLES: readonly EdgeRole[] = [
  'new_fact',
  'clarification',
  'corroboration',
  'redundant',
  'conflict',
  'irrelevant',
];

const ECV_INSTRUCTIONS = `You check how retrieved memories relate to high-confidence anchor memories for a question.
Each candidate lists the anchors it is structurally linked to (same conversation round, adjacent turn, same email thread, nearby photo, ...).
For EVERY candidate, pick the linked anchor it best complements (best_anchor_id, or null) and judge what the candidate ADDS to that anchor for answering the question:
- incremental_support: 0 (adds nothing) to 5 (adds the decisive missing piece);
- role: "new_fact" (adds a needed fact), "clarification" (updates, corrects or makes the anchor precise),
  "corroboration" (independently confirms it), "redundant" (repeats it), "conflict" (contradicts it without
  resolving the question), or "irrelevant".
A "supersedes" relation means candidate and anchor are two versions of one fact (candidate_version says whether the candidate is the newer or the older one): judge it as an update, "clarification" when the fact matters for the question (the newer value is current, the older one is its history), never "redundant".
Question image captions are noisy automatic descriptions. Set direct_support to 0.
Reply with one JSON object and nothing else:
{"candidates": [{"id": "C03", "direct_support": 0, "best_anchor_id": "C00", "incremental_support": 4, "role": "new_fact"}, ...]}
with exactly one row per candidate id.`;

export function ecvMessages(input: EdgeVerifierInput): ChatMessage[] {
  const text = questionText(input.question);
  const aliasOf = new Map(input.anchors.map((a) => [a.memoryId, a.alias]));
  const anchorRecord = new Map(input.anchors.map((a) => [a.memoryId, a.record]));
  for (const { candidate } of input.candidates) aliasOf.set(candidate.memoryId, candidate.alias);
  const payload = {
    ...questionPayload(input.question),
    anchors: input.anchors.map((anchor) => ({
      id: anchor.alias,
      date: anchor.record.timestamp ?? null,
      location: locationText(anchor.record) ?? null,
      snippet: candidateSnippet(anchor.record, text),
    })),
    candidates: input.candidates.map(({ candidate, relations }) => ({
      ...candidatePayload(candidate, text),
      is_atomic_anchor: candidate.isAnchor,
      eligible_anchor_relations: relations.map((r) => {
        const anchor = anchorRecord.get(r.anchorId);
        return {
          anchor_id: aliasOf.get(r.anchorId) ?? r.anchorId,
          relation_types: r.relationTypes,
          ...(r.relationTypes.includes('supersedes') && anchor
            ? {
                candidate_version:
                  supersessionOrder(candidate.record, anchor).newer.id === candidate.memoryId
                    ? 'newer'
                    : 'older',
              }
            : {}),
        };
      }),
    })),
  };
  return [
    { role: 'system', content: ECV_INSTRUCTIONS },
    { role: 'user', content: JSON.stringify(payload) },
  ];
}

/** A raw ECV row after domain checks, before normalisation (aliases already mapped to memory ids). */
export interface RawEdgeJudgement {
  candidateId: string;
  anchorId: string | null;
  incrementalSupport: number;
  role: EdgeRole;
}

/**
 * Parses {"candidates": [...]} (a bare array under another key is not accepted). Unknown candidate ids are
 * ignored; duplicate ids, a missing candidate (incomplete coverage), roles outside the six and scores outside
 * [0, 5] are rejected. Anchor ids are mapped from aliases; unknown ones are kept as given so that the first
 * normalisation rule clears them. direct_support is read and discarded: the node verifier owns it.
 */
export function parseEcvVerdict(text: string, input: EdgeVerifierInput): ParseResult<RawEdgeJudgement[]> {
  const parsed = parseJsonObject(text);
  if (!parsed.ok) return parsed;
  const rows = parsed.value.candidates;
  if (!Array.isArray(rows)) return { ok: false, error: 'missing array field "candidates"' };
  const candidateByAlias = new Map(
    input.candidates.map(({ candidate }) => [candidate.alias, candidate.memoryId]),
  );
  const idByAlias = new Map<string, string>(input.anchors.map((a) => [a.alias, a.memoryId]));
  for (const [alias, id] of candidateByAlias) idByAlias.set(alias, id);
  const out = new Map<string, RawEdgeJudgement>();
  for (const [index, row] of rows.entries()) {
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      return { ok: false, error: `candidates[${index}] is not an object` };
    }
    const fields = row as Record<string, unknown>;
    const memoryId = typeof fields.id === 'string' ? candidateByAlias.get(fields.id) : undefined;
    if (memoryId === undefined) continue;
    if (out.has(memoryId)) return { ok: false, error: `id ${String(fields.id)} appears more than once` };
    const score = toNumber(fields.incremental_support ?? 0);
    if (score === undefined || score < 0 || score > 5) {
      return {
        ok: false,
        error: `incremental_support of ${String(fields.id)} must be a number from 0 to 5`,
      };
    }
    const role = fields.role ?? 'irrelevant';
    if (typeof role !== 'string' || !EDGE_ROLES.includes(role as EdgeRole)) {
      return { ok: false, error: `role of ${String(fields.id)} must be one of ${EDGE_ROLES.join(', ')}` };
    }
    const anchor = fields.best_anchor_id;
    if (anchor !== null && anchor !== undefined && typeof anchor !== 'string') {
      return { ok: false, error: `best_anchor_id of ${String(fields.id)} must be a string or null` };
    }
    out.set(memoryId, {
      candidateId: memoryId,
      anchorId: typeof anchor === 'string' && anchor !== '' ? (idByAlias.get(anchor) ?? `?${anchor}`) : null,
      incrementalSupport: score,
      role: role as EdgeRole,
    });
  }
  const missing = input.candidates.filter(({ candidate }) => !out.has(candidate.memoryId));
  if (missing.length > 0) {
    return {
      ok: false,
      error: `every candidate needs exactly one row; missing ${missing.map(({ candidate }) => candidate.alias).join(', ')}`,
    };
  }
  return { ok: true, value: input.candidates.map(({ candidate }) => out.get(candidate.memoryId)!) };
}

/**
 * A "redundant" verdict on a supersedes pair (two versions of one fact) becomes "clarification" with the
 * model's own score: versions differ in the value that matters, and dropping one as a repeat would hide
 * either the current value or its history. A score of 0 then still ends irrelevant (rule 3 below).
 */
export function versionRole(raw: RawEdgeJudgement, relations: readonly EligibleRelation[]): RawEdgeJudgement {
  if (raw.role !== 'redundant' || raw.anchorId === null) return raw;
  const relation = relations.find((r) => r.anchorId === raw.anchorId);
  return relation?.relationTypes.includes('supersedes') ? { ...raw, role: 'clarification' } : raw;
}

/**
 * The ECV normalisation rules of method notes 5, FIRST matching rule only, then role gating:
 * 1. anchor not among the candidate's eligible anchors -> anchor null, score 0, irrelevant;
 * 2. anchor null but score > 0 or a role other than irrelevant -> score 0, irrelevant;
 * 3. positive role with score <= 0 -> irrelevant;
 * 4. non-positive role with score > 0 -> score 0.
 * Kept iff the role is positive (new_fact, clarification, corroboration) and score > 0.
 */
export function normalizeJudgement(
  raw: RawEdgeJudgement,
  eligibleAnchors: ReadonlySet<string>,
): EdgeJudgement {
  let { anchorId, incrementalSupport, role } = raw;
  const positive = POSITIVE_ROLES.includes(role);
  if (anchorId !== null && !eligibleAnchors.has(anchorId)) {
    anchorId = null;
    incrementalSupport = 0;
    role = 'irrelevant';
  } else if (anchorId === null && (incrementalSupport > 0 || role !== 'irrelevant')) {
    incrementalSupport = 0;
    role = 'irrelevant';
  } else if (positive && incrementalSupport <= 0) {
    role = 'irrelevant';
  } else if (!positive && incrementalSupport > 0) {
    incrementalSupport = 0;
  }
  const kept = anchorId !== null && POSITIVE_ROLES.includes(role) && incrementalSupport > 0;
  return { candidateId: raw.candidateId, anchorId, incrementalSupport, role, kept };
}

function toNumber(value: unknown): number | undefined {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}
