import { inSet, trimEndChars, trimStartChars } from '../types/trim-chars.ts';

/**
 * Parses dataset evidence references ("D1:3", "D1:3; D1:5", "D12:3-D12:5", "D2:7,D2:9", arrays of these)
 * into normalised dialogue ids `D<session>:<turn>` (leading zeros dropped). Never throws: anything that is
 * not a recognisable id or a same-session range lands in `invalid`, verbatim, for the caller to report.
 */
export interface EvidenceRefs {
  /** Normalised ids in first-seen order, without duplicates. */
  ids: string[];
  /** Tokens that could not be read as an id or range. */
  invalid: string[];
}

/** A range longer than this is a typo, not evidence ("D1:1-D1:9999"). */
const MAX_RANGE = 200;

const SINGLE = /^D(\d+):(\d+)$/i;
/** Whitespace around a colon ("D1 : 3"), each run entered at its first character only (see parseEvidenceRefs). */
const COLON_SPACES = /(?<!\s)\s*:\s*/g;
const RANGE = /^D(\d+):(\d+)-(?:D(\d+):)?(\d+)$/i;

export function parseEvidenceRefs(raw: unknown): EvidenceRefs {
  const ids: string[] = [];
  const invalid: string[] = [];
  const seen = new Set<string>();
  const push = (id: string): void => {
    if (!seen.has(id)) {
      seen.add(id);
      ids.push(id);
    }
  };
  for (const text of flattenStrings(raw)) {
    // Each pattern starts a whitespace run only at its first character (the lookbehinds): from every position of
    // a long run without the ':' or '-' after it they rescanned it (100k spaces took 51 s); same replacements.
    const normalised = text.replace(COLON_SPACES, ':').replace(/(?<!\s)\s*(?:-|–|\bto\b)\s*(?=D?\d)/gi, '-');
    for (const rawToken of normalised.split(/[;,\s|]+/)) {
      const token = trimEndChars(trimStartChars(rawToken, inSet(`"'([{`)), inSet(`"')]}.`));
      if (token === '') continue;
      const single = SINGLE.exec(token);
      if (single) {
        push(normaliseDiaId(single[1]!, single[2]!));
        continue;
      }
      const range = RANGE.exec(token);
      const expanded = range ? expandRange(range) : undefined;
      if (expanded) expanded.forEach(push);
      else invalid.push(rawToken);
    }
  }
  return { ids, invalid };
}

/** `D<session>:<turn>` with numbers normalised, or undefined when `value` is not a dialogue id. */
export function normaliseDiaIdString(value: string): string | undefined {
  const match = SINGLE.exec(value.trim().replace(COLON_SPACES, ':'));
  return match ? normaliseDiaId(match[1]!, match[2]!) : undefined;
}

function normaliseDiaId(session: string, turn: string): string {
  return `D${Number(session)}:${Number(turn)}`;
}

function expandRange(match: RegExpExecArray): string[] | undefined {
  const session = Number(match[1]);
  const endSession = match[3] === undefined ? session : Number(match[3]);
  const start = Number(match[2]);
  const end = Number(match[4]);
  // Cross-session ranges have no defined member list: report them instead of guessing.
  if (endSession !== session || end < start || end - start > MAX_RANGE) return undefined;
  const out: string[] = [];
  for (let turn = start; turn <= end; turn += 1) out.push(`D${session}:${turn}`);
  return out;
}

function flattenStrings(raw: unknown): string[] {
  if (typeof raw === 'string') return [raw];
  if (typeof raw === 'number') return [String(raw)];
  if (Array.isArray(raw)) return raw.flatMap(flattenStrings);
  return [];
}
