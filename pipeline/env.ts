/**
 * The stage settings read from the environment by the stages themselves (structure, factors'
 * health, scenarios): `schema` names the variables with their types, ranges and defaults. An empty
 * value counts as unset; the first bad one is an Error `<VARIABLE>: <what is wrong>`.
 */
import type { z } from 'zod';

export function envSettings<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const given = Object.fromEntries(Object.keys(schema.shape).flatMap((k) => (env[k] === undefined || env[k] === '' ? [] : [[k, env[k]]])));
  const parsed = schema.safeParse(given);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${String(issue.path[0])}: ${issue.message}`);
  }
  return parsed.data;
}
