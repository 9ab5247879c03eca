/**
 * Regenerates schema/unified-archive.schema.json from the zod schema of the unified archive format.
 * Run `npx tsx scripts/write-json-schema.ts` after changing src/schemas/record-schema.ts or
 * src/importers/unified-line-schema.ts; test/importers/unified-json-schema.test.ts fails until you do.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { unifiedArchiveJsonSchemaText } from '../src/importers/unified-line-schema.ts';

const target = fileURLToPath(new URL('../schema/unified-archive.schema.json', import.meta.url));
writeFileSync(target, unifiedArchiveJsonSchemaText());
console.log(`wrote ${target}`);
