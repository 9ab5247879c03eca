/**
 * The text size rule moved to the record limits (src/schemas/record-limits.ts), which toMemoryRecord applies
 * to every record; these names stay for the importers' option default and older imports.
 */
import { RECORD_LIMITS } from '../schemas/record-limits.ts';

export { oversizedTextField } from '../schemas/record-limits.ts';

/** ImportOptions.maxTextBytes default: 1 MiB per text field. */
export const DEFAULT_MAX_TEXT_BYTES = RECORD_LIMITS.maxTextBytes;
