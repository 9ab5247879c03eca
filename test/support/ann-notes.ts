/** Ann's i-th note: a few shared words (class, train, garden numbers), so notes have kNN neighbours. */
export const annText = (i: number) =>
  `ann noted item ${i} about the pottery class ${i % 37}, the night train ${i % 11} and garden ${i % 23}`;

/** Ann's notes a<from>..a<from+count-1>, 20 to a session. */
export const annNotes = (from: number, count: number) =>
  Array.from({ length: count }, (_, n) => ({
    id: `a${from + n}`,
    text: annText(from + n),
    sessionId: `s${Math.floor((from + n) / 20)}`,
  }));
