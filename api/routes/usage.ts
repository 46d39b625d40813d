/**
 * `GET /api/usage/`: the calling key's own usage — today's counts against its plan's quota (and
 * the probability scope's), per route, and the daily totals of the last `days` days (1..90,
 * default 30). Needs a key (anonymous: 401). Not snapshot data: no `as_of`. Not charged to the
 * quota nor counted (`uncharged`): a key whose quota is used up can still read it.
 */
import { z } from 'zod';
import { authOf } from '../auth/middleware.ts';
import { planPolicy, probabilityPolicy } from '../auth/plans.ts';
import { ApiError } from '../errors/problem.ts';
import { queryInt } from '../http/params.ts';
import { rawRoute } from '../http/registry.ts';
import { noStore } from '../http/respond.ts';
import { count, isoTime } from '../openapi/common.ts';

const Quota = z.object({
  policy: z.string().meta({
    description: 'The policy name, as in the RateLimit-Policy header: the key\'s plan (pro, api, enterprise), or `probability` for the probability scope.',
  }),
  limit: z.number().int().nullable().meta({ description: 'Requests per window; null = unlimited.' }),
  used: count.meta({ description: 'Requests charged to this quota today (UTC); refused ones are counted in `rejected`, not here.' }),
  remaining: z.number().int().nullable().meta({ description: 'limit − used, at least 0; null = unlimited.' }),
  window_seconds: z.number().int().meta({ description: 'Length of the quota window in seconds (86400: one UTC day).' }),
  resets_at: isoTime.meta({ description: 'When the window ends and the count restarts (the next UTC midnight).' }),
});

export const UsageResponse = z
  .object({
    key: z
      .object({
        id: z.string().meta({ description: 'The key\'s id (`key_` + 12 hex characters); not the secret key itself.' }),
        name: z.string().meta({ description: 'The name the key was issued with.' }),
        plan: z.enum(['pro', 'api', 'enterprise']).meta({ description: 'The key\'s plan: it sets the daily quota and the endpoints the key may call.' }),
        scopes: z.array(z.string()).meta({ description: 'Scopes granted beyond the plan (`probability`: the probability endpoint).' }),
        hint: z.string().meta({ description: 'Last 4 characters of the key.' }),
        created_at: isoTime.meta({ description: 'When the key was issued.' }),
      })
      .meta({ description: 'The calling key.' }),
    date: z.string().meta({ description: 'The UTC day counted (YYYY-MM-DD).' }),
    quota: Quota.meta({ description: 'The plan\'s daily request quota.' }),
    probability: Quota.nullable().meta({ description: 'The probability scope\'s quota (keys with the scope).' }),
    probability_cost_usd: z.number().nullable().meta({
      description: 'USD the key\'s probability requests cost today (its daily budget is QUORUM_PROBABILITY_BUDGET_USD_PER_DAY); null without the scope.',
    }),
    probability_budget_usd: z.number().nullable().meta({ description: 'The daily USD budget per key; null: none (or no scope).' }),
    rejected: count.meta({ description: 'Requests refused with 429 today.' }),
    routes: z.record(z.string(), count).meta({ description: 'Today\'s requests per route id.' }),
    history: z
      .array(
        z.object({
          date: z.string().meta({ description: 'The UTC day (YYYY-MM-DD).' }),
          requests: count.meta({ description: 'Requests charged to the plan\'s quota that day.' }),
          rejected: count.meta({ description: 'Requests refused with 429 that day.' }),
          probability: count.meta({ description: 'Requests charged to the probability scope\'s quota that day.' }),
        }),
      )
      .meta({ description: 'Daily totals of the last `days` days, newest first: today always, earlier days only when the key made requests.' }),
  })
  .meta({ id: 'Usage' });

const DAYS = { min: 1, max: 90, default: 30 };

export const usageRoute = rawRoute({
  id: 'usage',
  path: '/api/usage/',
  uncharged: true,
  summary: 'Your key\'s usage and remaining quota',
  tags: ['account'],
  query: z.object({ days: z.int().min(DAYS.min).max(DAYS.max).default(DAYS.default).optional() }),
  errors: [400],
  responses: { 'application/json': { schema: UsageResponse } },
  handle: async (req, res, { services }) => {
    const days = queryInt(req, 'days', DAYS);
    const auth = authOf(res);
    const record = auth.keyId === null ? null : services.keys.byId(auth.keyId);
    if (!record) throw ApiError.unauthorized('This endpoint needs an API key.');
    const u = services.usage.get(record.id);
    const resetsAt = new Date(services.usage.dayEndsAt).toISOString();
    const policy = planPolicy(record.plan, services.quotas.limits);
    const prob = probabilityPolicy(services.quotas.limits);
    const quota = (name: string, limit: number | null, used: number) => ({
      policy: name,
      limit,
      used,
      remaining: limit === null ? null : Math.max(0, limit - used),
      window_seconds: 86_400,
      resets_at: resetsAt,
    });
    noStore(res);
    res.status(200).json({
      key: {
        id: record.id,
        name: record.name,
        plan: record.plan,
        scopes: record.scopes,
        hint: record.hint,
        created_at: record.created_at,
      },
      date: services.usage.day,
      quota: quota(policy.name, policy.quota, u.requests),
      probability: record.scopes.includes('probability') ? quota(prob.name, prob.quota, u.probability) : null,
      probability_cost_usd: record.scopes.includes('probability') ? (services.probability?.store.spentToday(record.id) ?? 0) : null,
      probability_budget_usd: record.scopes.includes('probability') ? (services.probability?.budgetUsdPerDay ?? null) : null,
      rejected: u.rejected,
      routes: { ...u.routes },
      history: await services.usage.history(record.id, days),
    });
  },
});
