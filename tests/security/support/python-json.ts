/**
 * What Python 3's `json.dumps(value)` prints, with its defaults (ensure_ascii=True, separators ', ' and ': '), for a
 * value that came from JSON.parse of a JSON.stringify output: what a provider's chat template prints when it
 * re-renders a tool's schema or a tool call's arguments (billing-openrouter.ts, the json-dumps mode). The test file
 * checks it byte for byte against the real python3.
 *
 * The value is what Python's json.loads makes of the JSON text JavaScript sends: a number JSON.stringify prints
 * without '.' or 'e' is a Python int (its digits, however many), any other a float, printed by float.__repr__.
 */

const SHORT_ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/**
 * A string as ensure_ascii prints it: printable ASCII as is, the seven short escapes, every other UTF-16 code unit
 * (controls, DEL 0x7f, all non-ASCII, each half of a surrogate pair, a lone surrogate) as \uXXXX in lowercase hex.
 */
function pythonString(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const char = text.charAt(i);
    const code = text.charCodeAt(i);
    const short = SHORT_ESCAPES[char];
    if (short !== undefined) out += short;
    else if (code >= 0x20 && code <= 0x7e) out += char;
    else out += `\\u${code.toString(16).padStart(4, '0')}`;
  }
  return `${out}"`;
}

/**
 * float.__repr__: the shortest digits that round-trip (JavaScript's too), in fixed notation while the decimal
 * exponent is in [-4, 16), with '.0' when integral; otherwise d.ddde±XX, the exponent of two digits at least.
 * (Exponents 16 to 20 never reach here from JSON.stringify, which prints those numbers as integers: Python reads ints.)
 */
function pythonFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  const sign = value < 0 ? '-' : '';
  const [mantissa = '0', exponentText = '0'] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) {
    const fraction = digits.length > 1 ? `.${digits.slice(1)}` : '';
    const magnitude = String(Math.abs(exponent)).padStart(2, '0');
    return `${sign}${digits[0]}${fraction}e${exponent < 0 ? '-' : '+'}${magnitude}`;
  }
  const point = exponent + 1;
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point < digits.length) return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
  return `${sign}${digits}${'0'.repeat(point - digits.length)}.0`;
}

/** An int when JSON.stringify prints no '.' nor 'e' (so -0 is the int 0, as Python reads the "0" it is sent). */
function pythonNumber(value: number): string {
  // JSON.stringify prints a non-finite number as null; a Python float prints it as NaN or ±Infinity.
  if (!Number.isFinite(value)) return pythonFloat(value);
  const json = JSON.stringify(value);
  return json.includes('.') || json.includes('e') ? pythonFloat(value) : json;
}

/** Python 3's `json.dumps(value)`, byte for byte (see the file's comment for which values). */
export function pythonJsonDumps(value: unknown): string {
  if (value === null) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'number') return pythonNumber(value);
  if (typeof value === 'string') return pythonString(value);
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return `{${entries.map(([key, item]) => `${pythonString(key)}: ${pythonJsonDumps(item)}`).join(', ')}}`;
  }
  throw new TypeError(`pythonJsonDumps: ${typeof value} is no JSON value`);
}
