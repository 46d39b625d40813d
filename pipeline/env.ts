/**
 * The stage settings read from the environment by the stages themselves (structure, factors'
 * health, scenarios): `schema` names the variables with their types, ranges and defaults. An empty
 * value counts as unset; the first bad one is an Error `<VARIABLE>: <what is wrong>`.
 */
import type { z } from 'zod';

/**
 * The variables of `env` that are set: an empty or whitespace-only value counts as unset, in every
 * loader (QA: a number variable set to " " was coerced to 0, which turned an hourly limit into
 * "unlimited" and PORT into a random port).
 */
export function setVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1].trim() !== ''));
}

export function envSettings<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const set = setVariables(env);
  const given = Object.fromEntries(Object.keys(schema.shape).flatMap((k) => (set[k] === undefined ? [] : [[k, set[k]]])));
  const parsed = schema.safeParse(given);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${String(issue.path[0])}: ${issue.message}`);
  }
  return parsed.data;
}
