/**
 * `npm run bench -- <name>`: runs bench/<name>.ts, whose default export measures the project
 * against its baseline in the same run and returns the result object. The last line printed is
 * that object as JSON: `{"bench":"<name>","ratio":<x>,...}`.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'main.ts')
  .map((f) => f.slice(0, -3));

const name = process.argv[2];
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <name>   (one of: ${available.join(', ')})`);
  process.exit(2);
}
const mod = (await import(join(here, `${name}.ts`))) as {
  default: (args: string[]) => Promise<Record<string, unknown>>;
};
const result = await mod.default(process.argv.slice(3));
console.log(JSON.stringify({ bench: name, ...result }));
process.exit(0);
