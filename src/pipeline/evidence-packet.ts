import type { ForestSolution } from '../core/candidate-graph.ts';
import type { MemoryRecord } from '../types/memory-record.ts';
import { recordCaptions, recordOcr } from '../verify/candidate-snippet.ts';
import { cleanOcr, PACKET_OCR_CHARS } from '../verify/clean-ocr.ts';
import type { EvidenceItem, PoolCandidate } from './retrieval-result.ts';

/**
 * The evidence packet: the forest's memories in reading order (trees by root prize, each breadth-first,
 * method notes 8), each with its tree, its parent relation, and the reader's canonical text.
 */
export function buildEvidence(
  forest: ForestSolution,
  records: ReadonlyMap<string, MemoryRecord>,
  pool: ReadonlyMap<string, PoolCandidate>,
  questionText: string,
): EvidenceItem[] {
  const items: EvidenceItem[] = [];
  for (const [treeIndex, tree] of forest.trees.entries()) {
    for (const memoryId of tree.order) {
      const record = records.get(memoryId);
      const candidate = pool.get(memoryId);
      if (!record || !candidate) continue;
      const parent = tree.parents[memoryId];
      items.push({
        rank: items.length + 1,
        memoryId,
        ...(record.sourceId === undefined ? {} : { sourceId: record.sourceId }),
        kind: record.kind,
        ...(record.timestamp === undefined ? {} : { date: record.timestamp }),
        // A copy: pool records are shared between questions (pool-records.ts).
        ...(record.location === undefined ? {} : { location: { ...record.location } }),
        ...(record.speaker === undefined ? {} : { speaker: record.speaker }),
        text: canonicalText(record, questionText),
        media: evidenceMedia(record),
        tree: treeIndex,
        ...(parent
          ? {
              parent: {
                memoryId: parent.parentId,
                relationTypes: parent.edge.relationTypes,
                role: parent.edge.role,
                weight: parent.edge.weight,
              },
            }
          : {}),
        prize: candidate.prize,
        retrievalScore: candidate.retrievalScore,
        verifierScore: candidate.verifierScore,
      });
    }
  }
  return items;
}

/** Text, then captions, then cleaned query-aware OCR capped at 320 characters (method notes 9). */
export function canonicalText(record: MemoryRecord, questionText: string): string {
  const parts = [record.text.trim()];
  for (const caption of recordCaptions(record)) parts.push(`[image caption] ${caption}`);
  const ocr = cleanOcr(recordOcr(record), questionText, PACKET_OCR_CHARS);
  if (ocr !== '') parts.push(`[OCR] ${ocr}`);
  return parts.filter((p) => p !== '').join('\n');
}

/** Images with a uri, and for videos their sampled frames (or the video itself when it has none). */
export function evidenceMedia(record: MemoryRecord): EvidenceItem['media'] {
  const media: EvidenceItem['media'] = [];
  for (const asset of record.assets) {
    const caption = asset.derived?.captions?.[0];
    const withCaption = caption === undefined ? {} : { caption };
    if (asset.kind === 'image' && asset.uri !== undefined)
      media.push({ kind: 'image', uri: asset.uri, ...withCaption });
    if (asset.kind !== 'video') continue;
    if (asset.frames && asset.frames.length > 0) {
      for (const frame of asset.frames) media.push({ kind: 'frame', uri: frame, ...withCaption });
    } else if (asset.uri !== undefined) {
      media.push({ kind: 'video', uri: asset.uri, ...withCaption });
    }
  }
  return media;
}

/** Header line of one item: rank, memory id, source id, modality (the reader sees no scores). */
export function itemHeader(item: EvidenceItem): string {
  const modality = [item.kind, ...new Set(item.media.map((m) => m.kind))].join('+');
  return `[Evidence ${item.rank}] memory ${item.memoryId} | source ${item.sourceId ?? '-'} | modality ${modality}`;
}

/**
 * When/who/where of an item, one line ("Date: 2024-06-17 | Speaker: Maya"), or '' when none is known;
 * versions of a fact also show when they were recorded ("Recorded: 2024-05-28T16:30:00Z").
 */
export function itemContextLine(item: EvidenceItem): string {
  const parts: string[] = [];
  if (item.date) parts.push(`Date: ${item.date}`);
  // The second clock, for versions of a fact: the event date alone cannot say which statement came later.
  if (item.recordedAt) parts.push(`Recorded: ${item.recordedAt}`);
  if (item.speaker) parts.push(`Speaker: ${item.speaker}`);
  if (item.location?.name) parts.push(`Location: ${item.location.name}`);
  return parts.join(' | ');
}

/**
 * Where a version stands, one line, or '' for a memory without supersedes links:
 * "Version: CURRENT (supersedes memory a)" / "Version: SUPERSEDED by memory c (older value, not current)".
 */
export function itemVersionLine(item: EvidenceItem): string {
  const version = item.version;
  if (!version) return '';
  const memories = (ids: readonly string[]) => `memor${ids.length === 1 ? 'y' : 'ies'} ${ids.join(', ')}`;
  return version.status === 'current'
    ? `Version: CURRENT (newest value; supersedes ${memories(version.supersedes)})`
    : `Version: SUPERSEDED by ${memories(version.supersededBy)} (older value, not current)`;
}

/** Plain-text rendering of the packet for prompts and terminals; media shown as references. */
export function renderPacketText(items: readonly EvidenceItem[]): string {
  return items
    .map((item) => {
      const lines = [itemHeader(item)];
      const context = itemContextLine(item);
      if (context !== '') lines.push(context);
      const version = itemVersionLine(item);
      if (version !== '') lines.push(version);
      if (item.text !== '') lines.push(item.text);
      for (const media of item.media) lines.push(`<${media.kind}: ${media.uri}>`);
      return lines.join('\n');
    })
    .join('\n\n');
}
