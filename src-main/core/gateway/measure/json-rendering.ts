/**
 * How many bytes more a JSON value can take when a provider's chat template prints it again (docs/ARCHITECTURE.md
 * §11). The gateway's bound counts every byte it forwards at a token a byte, but a template does not read the
 * arguments of a tool call or a tool's definition as they sit in the body: it parses them and prints them anew,
 * most often with Python's `json.dumps` (Hugging Face's `tojson`) or Jinja's own `tojson`, and those print more:
 *  - a space after each `,` and `:` (the default separators `', '` and `': '`);
 *  - with `ensure_ascii` (json.dumps's default), every UTF-16 code unit from U+007F up as `\uXXXX`: "é" (2 bytes
 *    in the body) as 6, an emoji (4 bytes) as 12;
 *  - Jinja's HTML-safe `tojson` also writes `<`, `>`, `&` and `'` as `\u003c` …: 6 bytes for 1;
 *  - a number in exponent form with a two-digit exponent (`1e-7` → `1e-07`);
 *  - with `indent=4` (Llama 3's templates print each tool so), a line break and 4 spaces per level of nesting before
 *    every entry: this grows with depth, so a deeply nested schema is held at what it prints, not at its bytes.
 * Each is counted at its worst, so the result bounds what any of these prints. What a template prints as text (a
 * message, a tool result) it prints as it is, in fewer bytes than its JSON in the body, so it needs nothing here.
 *
 * One walk over the value, with no string built: per string, one regex test (native) that most strings pass with
 * nothing to count, and for the rest Buffer.byteLength and indexOf, since the bound must not cost what it guards (the
 * gateway's overhead per request, docs/PERFORMANCE.md).
 */

/** `<`, `>`, `&`, `'` (Jinja's HTML-safe escapes) and DEL (escaped by ensure_ascii): 1 byte in the body, 6 printed. */
const SIX_BYTE_ASCII = ['<', '>', '&', "'", '\x7f'];
/** Anything a template may print longer than the body holds it: the five above, and whatever is past ASCII. */
const GROWS = /[<>&'\x7f-\uffff]/;

/**
 * The most bytes `value` gains when printed again by a template, beyond its compact JSON in the body. `depth` is the
 * nesting of `value` itself (0 for the part a template prints, as Llama 3's `tools | tojson(indent=4)` does).
 */
export function renderingGrowth(value: unknown, depth = 0): number {
  if (typeof value === 'string') return stringGrowth(value);
  if (typeof value === 'number') return 1;
  if (Array.isArray(value)) {
    let growth = containerGrowth(value.length, depth);
    for (const item of value) growth += renderingGrowth(item, depth + 1);
    return growth;
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    // A space after each ':'.
    let growth = keys.length + containerGrowth(keys.length, depth);
    for (const key of keys) growth += stringGrowth(key) + renderingGrowth((value as Record<string, unknown>)[key], depth + 1);
    return growth;
  }
  return 0;
}

/**
 * What a list or an object of `entries` at `depth` can gain around its entries, at the worst of both printings: a space
 * after each ',' (json.dumps's default separators), and with `indent=4` a line break and 4 spaces a level before each
 * entry and before the closing bracket. Counted together, so either printing is covered; an empty one prints as is.
 */
function containerGrowth(entries: number, depth: number): number {
  if (entries === 0) return 0;
  return entries - 1 + entries * (1 + 4 * (depth + 1)) + 1 + 4 * depth;
}

/**
 * A string's growth: 5 bytes for each of the five ASCII characters above, and for the rest of what is past ASCII
 * at most 4 bytes per byte beyond the string's length in code units (b − n). Exact for a 2-byte character (é:
 * 6 printed − 2 in the body = 4 = 4 × 1), high for a 3-byte one (8 where 3) and exact for a surrogate pair (two
 * code units, 4 bytes: 12 − 4 = 8 = 4 × 2). A lone surrogate is 6 bytes in the body already (JSON.stringify
 * escapes it) and counted here at 8: high, as a bound may be.
 */
function stringGrowth(text: string): number {
  // Most strings (keys, types, plain descriptions) hold none of it: one native scan, nothing allocated.
  if (!GROWS.test(text)) return 0;
  const beyondAscii = Buffer.byteLength(text, 'utf8') - text.length;
  let sixes = 0;
  for (const char of SIX_BYTE_ASCII) for (let at = text.indexOf(char); at !== -1; at = text.indexOf(char, at + 1)) sixes++;
  return 4 * beyondAscii + 5 * sixes;
}
