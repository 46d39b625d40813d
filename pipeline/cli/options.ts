/** Option parsers of the CLI's numeric options: a clear message naming what is expected. */
import { InvalidArgumentError } from 'commander';

/** `--budget-usd`: an amount in USD in decimal notation (`2.50`, `0.5`, `.5`, `3`). */
export function parseUsd(value: string): number {
  const v = value.trim();
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(v)) throw new InvalidArgumentError('expected an amount in USD, e.g. 2.50');
  return Number(v);
}

/** An option's integer in [min, max], digits only (QA: `--port 99999` was Node's own message, `--latency-ms abc` 0). */
export function intOption(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value.trim());
    if (!/^\d+$/.test(value.trim()) || n < min || n > max) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    return n;
  };
}
