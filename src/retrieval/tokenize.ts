/**
 * The one tokenizer of the project, shared by BM25 (store), TF-IDF (offline semantic space) and the offline
 * verifiers, so a term means the same thing everywhere.
 *
 * Rules, in order:
 * 1. NFKC normalisation and lowercase (locale-independent).
 * 2. Apostrophes inside a word are dropped ("John's" -> "johns", "don't" -> "dont").
 * 3. Tokens are maximal runs of Unicode letters, marks and digits; everything else separates.
 *    Han, Hiragana and Katakana runs are split into single characters (no word segmentation offline).
 * 4. English stopwords (STOPWORDS) are removed; numbers are kept ("2024", "3").
 * 5. Plural folding (`stem`, TOKENIZER_VERSION 2): a singular and its plural give the same term.
 */
export function tokenize(text: string): string[] {
  return tokenizeWith(text, stem);
}

/**
 * Version of the term rule (rules 1-5 above, `stem` included). Stored lexical postings, the semantic IDF
 * snapshot and the relation keys are made of terms, so an archive records the version it was indexed with
 * (meta `tokenizer_version`) and a store migration reindexes an older one (docs/store-lexical-index.md,
 * "Terms"). Bump it, with a migration on every backend, whenever a change to this file changes a term.
 * 1: Harman's S stemmer ("buses" -> "buse", "bus" stays: they missed each other). 2: plural folding.
 */
export const TOKENIZER_VERSION = 2;

/**
 * `tokenize` with another stem rule: the same normalisation, splitting and stopwords. Tests reproduce an
 * archive indexed under an older TOKENIZER_VERSION with it.
 */
export function tokenizeWith(text: string, stemmer: (token: string) => string): string[] {
  // Fast path: pure ASCII needs no Unicode normalisation and cannot contain CJK (same result, ~2x faster).
  if (ASCII.test(text)) return asciiTokens(text, stemmer);
  const normalized = text.normalize('NFKC').toLowerCase().replace(INNER_APOSTROPHE, '$1$2');
  const tokens: string[] = [];
  for (const match of normalized.matchAll(WORD)) {
    const word = match[0];
    if (CJK.test(word)) {
      for (const part of splitCjk(word)) pushToken(tokens, part, stemmer);
    } else {
      pushToken(tokens, word, stemmer);
    }
  }
  return tokens;
}

/**
 * The ASCII case of tokenizeWith: words are the runs of [a-z0-9] of the lowercased text, scanned by char code
 * (no match objects; the apostrophe rule only runs on a text that has one). Same tokens as the regex path.
 */
function asciiTokens(text: string, stemmer: (token: string) => string): string[] {
  const lower = text.toLowerCase();
  const normalized = lower.includes("'") ? lower.replace(INNER_APOSTROPHE, '$1$2') : lower;
  const tokens: string[] = [];
  let start = -1;
  for (let i = 0; i <= normalized.length; i++) {
    const code = i < normalized.length ? normalized.charCodeAt(i) : 0;
    if ((code >= 97 && code <= 122) || (code >= 48 && code <= 57)) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      pushToken(tokens, normalized.slice(start, i), stemmer);
      start = -1;
    }
  }
  return tokens;
}

/**
 * English plural folding, so that a singular and its plural meet: bus/buses, box/boxes, church/churches,
 * dish/dishes, glass/glasses, city/cities, movie/movies, house/houses, potato/potatoes. Deterministic, no
 * dictionary beyond INVARIANT_WORDS; applied to alphabetic tokens of 4+ characters (shorter ones and
 * stopwords never reach it). A plural is reduced, then every form goes through the same singular
 * normalisation, so both sides of a pair land on one term even where the singular ends in a silent "e":
 * 1. INVARIANT_WORDS stay as they are ("news", "series", "species", "always", "lens", "bias", ...);
 * 2. "-ies": "ties" (4 letters) -> "tie"; otherwise -> "-y" ("cities" -> "city"), not after e/a;
 * 3. "-es" after a sibilant (s, x, z, ch, sh) -> "" when 3+ letters remain ("buses" -> "bus",
 *    "glasses" -> "glass", "churches" -> "church"; "axes" -> "axe" by rule 4);
 * 4. other "-es" -> "-e", not after a/e/o ("times" -> "time");
 * 5. "-s" -> "", not after u or s ("photos" -> "photo"; "status", "glass" stay);
 * 6. singular normalisation, when 3+ letters remain: a final "e" after a sibilant is dropped ("house" ->
 *    "hous" = "houses", "headache" -> "headach" = "headaches"); "-oe" -> "-o" ("potatoe(s)" -> "potato",
 *    "shoe" -> "sho" = "shoes"); and "-ie" -> "-y" for 4+ letters ("movie" -> "movy" = "movies").
 * Not folded, on purpose: "-ves"/"-f(e)" (knife/knives; folding would merge life with live, leaf with
 * leave), irregular plurals (men, children), "-zzes" (quiz/quizzes), verb endings (-ed, -ing).
 * Rules 1-5 are Harman's S stemmer (TOKENIZER_VERSION 1) plus the sibilant case and the invariants.
 */
export function stem(token: string): string {
  if (token.length < 4 || !isLetters(token) || INVARIANT_WORDS.has(token)) return token;
  return singular(plural(token));
}

/** ALPHA.test(token), by char code while the token is ASCII (most are; the Unicode regex is far slower). */
function isLetters(token: string): boolean {
  for (let i = 0; i < token.length; i++) {
    const code = token.charCodeAt(i);
    if (code >= 128) return ALPHA.test(token);
    if (!((code >= 97 && code <= 122) || (code >= 65 && code <= 90))) return false;
  }
  return true;
}

/** Words ending in "s" that are not plurals of a shorter term (or whose stripped form is another word). */
export const INVARIANT_WORDS: ReadonlySet<string> = new Set(
  'news series species always perhaps whereas lens bias atlas canvas alias christmas'.split(' '),
);

/** Rules 2-5 of `stem`: a plural ending removed. */
function plural(token: string): string {
  if (token.endsWith('ies')) {
    if (token.length === 4) return token.slice(0, -1);
    if (!token.endsWith('eies') && !token.endsWith('aies')) return `${token.slice(0, -3)}y`;
  }
  if (token.endsWith('es')) {
    if (SIBILANT_ES.test(token) && token.length >= 5) return token.slice(0, -2);
    if (!/[aeo]es$/.test(token)) return token.slice(0, -1);
  }
  if (token.endsWith('s') && !token.endsWith('us') && !token.endsWith('ss')) return token.slice(0, -1);
  return token;
}

/** Rule 6 of `stem`: the singular's own ending folded the way its plural's is. */
function singular(term: string): string {
  if (term.length >= 4 && (SIBILANT_E.test(term) || term.endsWith('oe'))) return term.slice(0, -1);
  if (term.length >= 4 && term.endsWith('ie')) return `${term.slice(0, -2)}y`;
  return term;
}

const SIBILANT_ES = /(?:[sxz]|ch|sh)es$/;
const SIBILANT_E = /(?:[sxz]|ch|sh)e$/;

/** English stopwords, plus the fragments that apostrophe splitting used to leave ("s", "t", "ll", ...). */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have ' +
    'having he her here hers herself him himself his how i if in into is it its itself just me more most my ' +
    'myself no nor not now of off on once only or other our ours ourselves out over own same she should so ' +
    'some such than that the their theirs them themselves then there these they this those through to too ' +
    'under until up very was we were what when where which while who whom why will with would you your ' +
    'yours yourself yourselves s t d ll m re ve im ive id youre theyre dont doesnt didnt isnt wasnt cant ' +
    'wont also'
  ).split(' '),
);

const INNER_APOSTROPHE = /(\p{L})['\u2019](\p{L})/gu;
const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const ASCII = /^[\x00-\x7f]*$/;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
const ALPHA = /^\p{L}+$/u;

function pushToken(tokens: string[], word: string, stemmer: (token: string) => string): void {
  if (STOPWORDS.has(word)) return;
  if (word.length < 4) {
    tokens.push(word);
    return;
  }
  tokens.push(stemmer(word));
}

/** "東京tower" -> ["東", "京", "tower"]: CJK characters one by one, other runs kept whole. */
function splitCjk(word: string): string[] {
  const parts: string[] = [];
  let run = '';
  for (const char of word) {
    if (CJK.test(char)) {
      if (run) parts.push(run);
      run = '';
      parts.push(char);
    } else {
      run += char;
    }
  }
  if (run) parts.push(run);
  return parts;
}
