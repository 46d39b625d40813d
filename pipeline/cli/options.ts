/** Option parsers of the CLI's numeric options: a clear message naming what is expected. */
import { InvalidArgumentError } from 'commander';
import { DECIMAL, wholeNumber } from '../env.ts';

/** `--budget-usd`: an amount in USD in decimal notation (`2.50`, `0.5`, `.5`, `3`). */
export function parseUsd(value: string): number {
  const v = value.trim();
  if (!DECIMAL.test(v)) throw new InvalidArgumentError('expected an amount in USD, e.g. 2.50');
  return Number(v);
}

/** An option's integer in [min, max], digits only, as the settings' (QA: `--port 99999` was Node's own message, `--latency-ms abc` 0). */
export function intOption(min: number, max: number): (value: string) => number {
  const schema = wholeNumber(min, max);
  return (value) => {
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    return parsed.data;
  };
}
