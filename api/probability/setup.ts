/**
 * The probability endpoint's default options, from the environment (pipeline/config.ts): the models
 * of QUORUM_MODELS_FILE, else the bundled model simulator, started on the first request (not at
 * start: most API processes never get one) and stopped when the app closes. Evidence providers as
 * the pipeline configures them (QUORUM_EVIDENCE_PROVIDERS): the default mode is augmented when they find
 * evidence for the question (service.ts, `shownMode`).
 */
import type { Logger } from 'pino';
import { loadConfig } from '../../pipeline/config.ts';
import { createEvidenceProviders } from '../../pipeline/evidence/index.ts';
import { loadModelsConfig } from '../../pipeline/models/config.ts';
import { startSimulator, type Simulator } from '../../pipeline/simulator/server.ts';
import type { ProbabilityOptions } from './service.ts';

/** Options from the environment, or false when the configuration is invalid (the endpoint then answers 503). */
export function defaultProbabilityOptions(logger: Logger): ProbabilityOptions | false {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'probability endpoint off: invalid configuration');
    return false;
  }
  let sim: Simulator | null = null;
  return {
    timeoutMs: config.probabilityTimeoutMs,
    callTimeoutMs: config.callTimeoutMs,
    budgetUsdPerDay: config.probabilityBudgetUsdPerDay,
    langs: config.langs,
    evidenceProviders: config.evidenceMax > 0 ? createEvidenceProviders(config) : [],
    evidenceMax: config.evidenceMax,
    models: async () => {
      if (!config.modelsFile && !config.simulatorUrl) {
        sim = await startSimulator({ port: 0, latencyMs: config.simulatorLatencyMs, jitterMs: config.simulatorJitterMs, faults: config.simulatorFaults });
        logger.warn({ url: sim.url, provider: 'simulated' }, 'probability endpoint: no models configured; answering with the bundled MODEL SIMULATOR');
      }
      return loadModelsConfig({
        file: config.modelsFile,
        env: process.env,
        simulatorUrl: sim?.url ?? config.simulatorUrl,
        simulator: {
          maxConcurrency: config.simulatorMaxConcurrency,
          priceInPerMtok: config.simulatorPriceInPerMtok,
          priceOutPerMtok: config.simulatorPriceOutPerMtok,
        },
      });
    },
    close: async () => {
      await (sim as Simulator | null)?.close();
    },
  };
}
