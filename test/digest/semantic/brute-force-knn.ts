/** Brute-force mutual kNN by a similarity function, for differential tests (ties: lower index first). */
export function bruteForceMutualKnn(
  n: number,
  k: number,
  similarity: (i: number, j: number) => number,
): Array<{ a: number; b: number; similarity: number }> {
  const round = (value: number): number => Math.round(value * 1e9) / 1e9;
  const top: number[][] = [];
  for (let i = 0; i < n; i++) {
    const scored: Array<[number, number]> = [];
    for (let j = 0; j < n; j++) {
      if (j === i) continue;
      const score = round(similarity(i, j));
      if (score > 0) scored.push([j, score]);
    }
    scored.sort((x, y) => y[1] - x[1] || x[0] - y[0]);
    top.push(scored.slice(0, k).map(([j]) => j));
  }
  const pairs: Array<{ a: number; b: number; similarity: number }> = [];
  for (let i = 0; i < n; i++) {
    for (const j of top[i]!) {
      if (j > i && top[j]!.includes(i)) pairs.push({ a: i, b: j, similarity: round(similarity(i, j)) });
    }
  }
  return pairs;
}
