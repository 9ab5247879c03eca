import { createHash } from 'node:crypto';

/**
 * Dev / held-out folds as the GraphMemix authors define them: fold = first 8 bytes of sha256(question id) read
 * as a big-endian unsigned integer, mod 5; fold 0 is dev. `heldout100` = the first 100 held-out questions
 * ordered by sha256("graphmemix-heldout-v1\0" + id).
 */
export type QuestionSplit = 'all' | 'dev' | 'heldout' | 'heldout100';
export const QUESTION_SPLITS: readonly QuestionSplit[] = ['all', 'dev', 'heldout', 'heldout100'];

export function questionFold(questionId: string): number {
  const digest = createHash('sha256').update(questionId, 'utf8').digest();
  return Number(digest.readBigUInt64BE(0) % 5n);
}

export function isDevQuestion(questionId: string): boolean {
  return questionFold(questionId) === 0;
}

export function heldoutOrderKey(questionId: string): string {
  return createHash('sha256').update(`graphmemix-heldout-v1\0${questionId}`, 'utf8').digest('hex');
}

/** Filters items by split, keeping input order except for heldout100, which is in held-out order. */
export function selectSplit<T>(items: readonly T[], split: QuestionSplit, idOf: (item: T) => string): T[] {
  switch (split) {
    case 'all':
      return [...items];
    case 'dev':
      return items.filter((item) => isDevQuestion(idOf(item)));
    case 'heldout':
      return items.filter((item) => !isDevQuestion(idOf(item)));
    case 'heldout100':
      return items
        .filter((item) => !isDevQuestion(idOf(item)))
        .map((item) => ({ item, key: heldoutOrderKey(idOf(item)) }))
        .sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0))
        .slice(0, 100)
        .map(({ item }) => item);
  }
}
