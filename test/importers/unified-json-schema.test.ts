import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { unifiedArchiveJsonSchemaText, unifiedLineSchema } from '../../src/importers/unified-line-schema.ts';

const repo = new URL('../../', import.meta.url);

describe('unified archive JSON Schema', () => {
  it('the committed schema file is in sync with the zod schema (run scripts/write-json-schema.ts)', () => {
    const committed = readFileSync(new URL('schema/unified-archive.schema.json', repo), 'utf8');
    expect(committed).toBe(unifiedArchiveJsonSchemaText());
  });

  it('describes the three line kinds and keeps records strict', () => {
    const schema = JSON.parse(unifiedArchiveJsonSchemaText()) as {
      oneOf: { properties: { type: { const: string } }; additionalProperties: boolean }[];
    };
    expect(schema.oneOf.map((entry) => entry.properties.type.const)).toEqual([
      'context',
      'memory',
      'question',
    ]);
    expect(schema.oneOf.every((entry) => entry.additionalProperties === false)).toBe(true);
  });

  it('every example line in docs/archive-format.md is valid', () => {
    const doc = readFileSync(new URL('docs/archive-format.md', repo), 'utf8');
    const blocks = [...doc.matchAll(/```jsonl\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
    const lines = blocks.flatMap((block) => block.split('\n').filter((line) => line.trim() !== ''));
    expect(lines.length).toBeGreaterThanOrEqual(5);
    for (const line of lines) {
      const parsed = unifiedLineSchema.safeParse(JSON.parse(line));
      expect(parsed.success, `${line}\n${parsed.success ? '' : parsed.error.message}`).toBe(true);
    }
  });
});
