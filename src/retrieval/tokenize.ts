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
 * 5. Light stemming: Harman's "S" stemmer (plurals only), chosen because it never merges unrelated words:
 *    "-ies" -> "-y" (not after e/a), "-es" -> "-e" (not after a/e/o), "-s" -> "" (not after u/s);
 *    applied to alphabetic tokens of 4+ characters. "cities" -> "city", "photos" -> "photo", "bus" stays.
 */
export function tokenize(text: string): string[] {
  // Fast path: pure ASCII needs no Unicode normalisation and cannot contain CJK (same result, ~2x faster).
  const ascii = ASCII.test(text);
  const normalized = (ascii ? text : text.normalize('NFKC')).toLowerCase().replace(INNER_APOSTROPHE, '$1$2');
  const tokens: string[] = [];
  for (const match of normalized.matchAll(ascii ? ASCII_WORD : WORD)) {
    const word = match[0];
    if (!ascii && CJK.test(word)) {
      for (const part of splitCjk(word)) pushToken(tokens, part);
    } else {
      pushToken(tokens, word);
    }
  }
  return tokens;
}

/** The stem rule alone (exported for callers that tokenize elsewhere, e.g. verifiers highlighting terms). */
export function stem(token: string): string {
  if (token.length < 4 || !ALPHA.test(token)) return token;
  if (token.endsWith('ies') && !token.endsWith('eies') && !token.endsWith('aies')) {
    return `${token.slice(0, -3)}y`;
  }
  if (token.endsWith('es') && !/[aeo]es$/.test(token)) return token.slice(0, -1);
  if (token.endsWith('s') && !token.endsWith('us') && !token.endsWith('ss')) return token.slice(0, -1);
  return token;
}

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
const ASCII_WORD = /[a-z0-9]+/g;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
const ALPHA = /^\p{L}+$/u;

function pushToken(tokens: string[], word: string): void {
  if (STOPWORDS.has(word)) return;
  if (word.length < 4) {
    tokens.push(word);
    return;
  }
  tokens.push(stem(word));
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
