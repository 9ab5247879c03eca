import type { DerivedFields, MemoryRecord } from '../types/memory-record.ts';

/** ImportOptions.maxTextBytes default: 1 MiB per text field. */
export const DEFAULT_MAX_TEXT_BYTES = 1024 * 1024;

/**
 * The first text field of a record over `maxBytes` (UTF-8), as a dotted path ("text",
 * "assets.0.derived.ocr"), or undefined when all fit. Checked field by field so the report names the one
 * to fix, not just the record.
 */
export function oversizedTextField(
  record: Pick<MemoryRecord, 'text' | 'assets' | 'derived'>,
  maxBytes: number,
): { field: string; bytes: number } | undefined {
  const fields: [string, string][] = [['text', record.text], ...derivedTexts('derived', record.derived)];
  for (const [index, asset] of record.assets.entries()) {
    fields.push(...derivedTexts(`assets.${index}.derived`, asset.derived));
  }
  for (const [field, value] of fields) {
    // Cheap bound first: a UTF-8 encoding is at most 3 bytes per UTF-16 unit.
    if (value.length * 3 <= maxBytes) continue;
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > maxBytes) return { field, bytes };
  }
  return undefined;
}

function derivedTexts(prefix: string, derived: DerivedFields | undefined): [string, string][] {
  if (derived === undefined) return [];
  const out: [string, string][] = [];
  for (const [index, caption] of (derived.captions ?? []).entries())
    out.push([`${prefix}.captions.${index}`, caption]);
  if (derived.ocr !== undefined) out.push([`${prefix}.ocr`, derived.ocr]);
  if (derived.summary !== undefined) out.push([`${prefix}.summary`, derived.summary]);
  return out;
}
