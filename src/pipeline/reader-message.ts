import type { ChatContentPart, ChatMessage } from '../providers/model-spec.ts';
import { itemContextLine, itemHeader, itemVersionLine } from './evidence-packet.ts';
import type { EvidenceItem, QuestionInput } from './retrieval-result.ts';

/**
 * Said once, before the evidence, when some items are versions of one fact (relation supersedes): they are
 * read oldest first, each with its event date and recorded date, and the newest is marked CURRENT.
 */
export const VERSIONS_NOTE =
  'Some memories below are versions of one fact, oldest first, each with the date of the event and the date it was recorded. The version marked CURRENT holds now; SUPERSEDED values are history (use them only when asked about the past).';

/** Reader output cap (method notes 1). */
export const READER_MAX_TOKENS = 1000;

/**
 * The ONE user message the reader gets (method notes 9, paper A.4): the question's own images first, then the
 * instruction and the question (with options), then each evidence item: header (rank, memory id, source id,
 * modality), its when/who line (and version line), canonical text (OCR already capped at 320), then its image
 * or sampled frames as image parts. When versions of a fact are present, VERSIONS_NOTE says that the newer
 * value is current. No system prompt, no scores, nothing of the verifiers, gold or judge.
 */
export function readerMessage(question: QuestionInput, evidence: readonly EvidenceItem[]): ChatMessage {
  const parts: ChatContentPart[] = [];
  for (const image of question.images ?? []) {
    if (image.uri !== undefined) parts.push({ type: 'image', uri: image.uri });
  }
  const ask: string[] = [];
  if (question.instruction) ask.push(question.instruction);
  ask.push(`Question: ${question.prompt}`);
  if (question.choices && question.choices.length > 0) {
    ask.push(`Options:\n${question.choices.map((c) => `${c.id}. ${c.text}`).join('\n')}`);
  }
  if (evidence.some((item) => item.version !== undefined)) ask.push(VERSIONS_NOTE);
  ask.push(evidence.length > 0 ? 'Evidence from memory:' : 'No evidence was found in memory.');
  parts.push({ type: 'text', text: ask.join('\n') });
  for (const item of evidence) {
    const lines = [itemHeader(item)];
    const context = itemContextLine(item);
    if (context !== '') lines.push(context);
    const version = itemVersionLine(item);
    if (version !== '') lines.push(version);
    if (item.text !== '') lines.push(item.text);
    parts.push({ type: 'text', text: lines.join('\n') });
    for (const media of item.media) {
      if (media.kind !== 'video') parts.push({ type: 'image', uri: media.uri });
    }
  }
  return { role: 'user', content: parts };
}
