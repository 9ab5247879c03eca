import { readFile } from 'node:fs/promises';

/** A dataset JSON file read whole, or why it could not be (unreadable or malformed: the parser's message). */
export type JsonFileResult = { ok: true; value: unknown } | { ok: false; error: string };

/** Reads and parses one JSON file; never throws, so importers can reject the file and go on. */
export async function readJsonFile(file: string): Promise<JsonFileResult> {
  try {
    return { ok: true, value: JSON.parse(await readFile(file, 'utf8')) };
  } catch (cause) {
    return { ok: false, error: (cause as Error).message };
  }
}
