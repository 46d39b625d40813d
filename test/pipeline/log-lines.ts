/**
 * Reading pino's JSON lines in tests: every line parsed, and the keys a line repeats at its top
 * level (JSON.parse keeps the last of a repeated key silently, so it cannot tell).
 */

export interface LogLine {
  level: number;
  msg?: string;
  [key: string]: unknown;
}

/** The top-level keys of one JSON object text, in order, repeats included. */
export function topLevelKeys(text: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (depth === 1) {
        let k = j + 1;
        while (text[k] === ' ') k++;
        if (text[k] === ':') keys.push(JSON.parse(text.slice(i, j + 1)) as string);
      }
      i = j;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return keys;
}

/** Keys that occur more than once at the top level of a JSON object text. */
export function repeatedKeys(text: string): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const k of topLevelKeys(text)) (seen.has(k) ? repeated : seen).add(k);
  return [...repeated];
}

/** Every non-empty line of `output` as a pino log line; throws on a line that is not JSON. */
export function parseLogLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      try {
        return JSON.parse(l) as LogLine;
      } catch {
        throw new Error(`not a JSON log line: ${l.slice(0, 200)}`);
      }
    });
}
