import type { MemoryRecord } from '../../types/memory-record.ts';

/**
 * The text a record contributes to the offline semantic space: its raw text, then every caption and OCR text
 * of the record and of its assets. Summaries and tags are left out: they are derived twice-removed and would
 * make unrelated records look alike through shared boilerplate.
 */
export function semanticText(record: MemoryRecord): string {
  const parts: string[] = [record.text];
  for (const derived of [record.derived, ...record.assets.map((asset) => asset.derived)]) {
    if (!derived) continue;
    // A loop, not push(...): spreading a huge caption list overflows the stack.
    for (const caption of derived.captions ?? []) parts.push(caption);
    if (derived.ocr) parts.push(derived.ocr);
  }
  return parts.join('\n');
}
