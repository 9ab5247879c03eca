/**
 * Lexical answer metrics (SQuAD-style normalisation): lowercase, strip punctuation and articles, collapse
 * whitespace. Exact match against any accepted answer; token F1 is the best over accepted answers.
 */
export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function exactMatch(prediction: string, references: readonly string[]): number {
  const normalized = normalizeAnswer(prediction);
  if (normalized === '') return 0;
  return references.some((reference) => normalizeAnswer(reference) === normalized) ? 1 : 0;
}

export function tokenF1(prediction: string, references: readonly string[]): number {
  const predTokens = normalizeAnswer(prediction).split(' ').filter(Boolean);
  let best = 0;
  for (const reference of references) {
    const refTokens = normalizeAnswer(reference).split(' ').filter(Boolean);
    if (predTokens.length === 0 || refTokens.length === 0) continue;
    const counts = new Map<string, number>();
    for (const token of refTokens) counts.set(token, (counts.get(token) ?? 0) + 1);
    let common = 0;
    for (const token of predTokens) {
      const left = counts.get(token) ?? 0;
      if (left > 0) {
        common += 1;
        counts.set(token, left - 1);
      }
    }
    if (common === 0) continue;
    const precision = common / predTokens.length;
    const recall = common / refTokens.length;
    best = Math.max(best, (2 * precision * recall) / (precision + recall));
  }
  return best;
}
