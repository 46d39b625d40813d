/**
 * Request quotas: every counted request is charged before its handler runs (cached answers
 * included) and every counted response carries the caller's quota:
 *   RateLimit-Policy: "<policy>";q=<quota>;w=<window seconds>      (IETF draft, structured fields)
 *   RateLimit:        "<policy>";r=<remaining>;t=<seconds to reset>
 *   X-RateLimit-Remaining: <remaining> | unlimited
 * The request that exceeds the quota — the (quota+1)-th of the window — is a 429 `rate_limited`
 * problem with `Retry-After` (refused requests are not charged, only recorded as `rejected`).
 *
 * Windows: keys per UTC day, counted durably in the UsageStore; anonymous callers per client IP
 * (IPv6: per /56 network, clientIp) per clock hour, in memory (a restart resets anonymous counts;
 * the map is cleared every hour).
 * The probability scope has its own daily quota, charged by `chargeProbability` in its route.
 */
import { isIP } from 'node:net';
import { ipv4Of, ipv6Groups } from '../http/ip.ts';
import type { Request, RequestHandler, Response } from 'express';
import { ApiError } from '../errors/problem.ts';
import type { AuthContext } from '../auth/entitlements.ts';
import { authOf } from '../auth/middleware.ts';
import { planPolicy, probabilityPolicy, type PlanLimits, type Policy } from '../auth/plans.ts';
import type { UsageStore } from './usage-store.ts';

const HOUR_MS = 3_600_000;

export class QuotaKeeper {
  readonly limits: PlanLimits;
  readonly usage: UsageStore;
  #hour = -1;
  #anon = new Map<string, number>();

  constructor(limits: PlanLimits, usage: UsageStore) {
    this.limits = limits;
    this.usage = usage;
  }

  #anonCounts(now: number): Map<string, number> {
    const hour = Math.floor(now / HOUR_MS);
    if (hour !== this.#hour) {
      this.#hour = hour;
      this.#anon = new Map();
    }
    return this.#anon;
  }

  /** The plan's window of `auth` (anonymous: `ip`): its policy, the requests charged so far, seconds to reset. */
  #window(auth: AuthContext, ip: string): { policy: Policy; used: number; reset: number } {
    const now = Date.now();
    const policy = planPolicy(auth.plan, this.limits);
    if (auth.keyId === null) {
      const used = this.#anonCounts(now).get(ip) ?? 0;
      return { policy, used, reset: Math.ceil(((this.#hour + 1) * HOUR_MS - now) / 1000) };
    }
    return { policy, used: this.usage.get(auth.keyId).requests, reset: Math.ceil((this.usage.dayEndsAt - now) / 1000) };
  }

  /**
   * Charges one request of `auth` (anonymous: `ip`), sets the quota headers, and throws a 429 when
   * the quota is used up (`anonymousRefusal`: that 429's detail for an anonymous caller).
   */
  charge(res: Response, auth: AuthContext, ip: string, anonymousRefusal = anonymousLimitDetail): void {
    const { policy, used, reset } = this.#window(auth, ip);
    if (policy.quota !== null && used >= policy.quota) {
      if (auth.keyId !== null) this.usage.count(auth.keyId, 'rejected');
      setHeaders(res, policy, 0, reset);
      const detail = auth.keyId === null
        ? anonymousRefusal(policy.quota)
        : `The ${policy.name} plan's limit of ${policy.quota} requests per day is used up.`;
      throw ApiError.rateLimited(reset, detail, { policy: policy.name, limit: policy.quota });
    }
    if (auth.keyId === null) this.#anon.set(ip, used + 1);
    else {
      this.usage.count(auth.keyId, 'requests');
      res.locals.chargedDay = this.usage.day; // refuseCharged takes the charge back from this day only
    }
    setHeaders(res, policy, policy.quota === null ? null : policy.quota - used - 1, reset);
  }

  /**
   * Sets the quota headers of `auth` (anonymous: `ip`) without charging anything: the answer of an
   * uncharged route (`/api/usage/`) carries the remaining quota like every other response.
   */
  describe(res: Response, auth: AuthContext, ip: string): void {
    const { policy, used, reset } = this.#window(auth, ip);
    setHeaders(res, policy, policy.quota === null ? null : policy.quota - used, reset);
  }

  /**
   * Charges the probability scope's own daily quota (call from the probability route). Its 429
   * takes back the plan's charge of the same request (the front door charged it before the route
   * ran; refused requests are not charged) and says 0 in X-RateLimit-Remaining: the limit that
   * refused it is used up.
   */
  chargeProbability(res: Response, auth: AuthContext): void {
    if (auth.keyId === null) return;
    const { policy, used, reset } = this.#probabilityWindow(res, auth, auth.keyId);
    this.usage.count(auth.keyId, 'probability');
    appendHeaders(res, policy, policy.quota === null ? null : policy.quota - used - 1, reset);
  }

  /**
   * The probability scope's 429 when its daily quota is used up, without charging anything: the
   * route asks before the work that precedes the charge (evidence retrieval, which may take a
   * third of the answer deadline and calls outside services), so a key out of quota is refused at
   * once (QA: it waited for the evidence providers, and drove their traffic, for each 429).
   */
  checkProbability(res: Response, auth: AuthContext): void {
    if (auth.keyId !== null) this.#probabilityWindow(res, auth, auth.keyId);
  }

  /** The probability scope's window of a key; throws its 429 (refusing the plan's charge) when used up. */
  #probabilityWindow(res: Response, auth: AuthContext, keyId: string): { policy: Policy; used: number; reset: number } {
    const policy = probabilityPolicy(this.limits);
    const used = this.usage.get(keyId).probability;
    const reset = Math.ceil((this.usage.dayEndsAt - Date.now()) / 1000);
    if (policy.quota !== null && used >= policy.quota) {
      this.refuseCharged(res, auth);
      appendHeaders(res, policy, 0, reset);
      res.setHeader('X-RateLimit-Remaining', '0');
      throw ApiError.rateLimited(reset, `The probability scope's limit of ${policy.quota} requests per day is used up.`, {
        policy: policy.name,
        limit: policy.quota,
      });
    }
    return { policy, used, reset };
  }

  /**
   * Takes back the plan's charge of a keyed request that a limit of its route then refused with a
   * 429 (the probability scope's quota, its requests in flight, its spending cap; the export slots
   * and the streams per key, through api/app.ts's problem handler), once: refused requests
   * are not charged, only recorded as `rejected`, and the key's routes still add up to the requests
   * charged. Sets the plan's quota headers again, without the charge.
   */
  refuseCharged(res: Response, auth: AuthContext): void {
    if (auth.keyId === null || res.locals.refused === true) return;
    res.locals.refused = true;
    const day = typeof res.locals.chargedDay === 'string' ? res.locals.chargedDay : undefined;
    this.usage.refuse(auth.keyId, String(res.locals.routeId ?? 'unmatched'), day);
    this.describe(res, auth, '');
  }

  /**
   * Charges a failed authentication attempt to the IP's anonymous quota (throws 429 when used up:
   * key guessing is rate limited). The 429 then says that the key was not accepted, not "use an API
   * key for more", which would be wrong advice to a caller who sent one.
   */
  chargeFailedAuth(res: Response, ip: string): void {
    this.charge(res, { plan: 'anonymous', keyId: null, scopes: [] }, ip, (quota) =>
      `The API key presented was not accepted, and this address has used up its limit of ${quota} ` +
        'anonymous or failed requests per hour; retry after Retry-After seconds with a valid key.');
  }
}

/** The anonymous 429's detail (an anonymous caller: a key gets more). */
function anonymousLimitDetail(quota: number): string {
  return `The anonymous limit of ${quota} requests per hour is used up; use an API key for more.`;
}

function setHeaders(res: Response, p: Policy, remaining: number | null, reset: number): void {
  if (p.quota === null) {
    res.setHeader('X-RateLimit-Remaining', 'unlimited');
    return;
  }
  res.setHeader('RateLimit-Policy', `"${p.name}";q=${p.quota};w=${p.windowSeconds}`);
  res.setHeader('RateLimit', `"${p.name}";r=${Math.max(0, remaining ?? 0)};t=${reset}`);
  res.setHeader('X-RateLimit-Remaining', String(Math.max(0, remaining ?? 0)));
}

function appendHeaders(res: Response, p: Policy, remaining: number | null, reset: number): void {
  if (p.quota === null) return;
  const policy = res.getHeader('RateLimit-Policy');
  const limit = res.getHeader('RateLimit');
  const pv = `"${p.name}";q=${p.quota};w=${p.windowSeconds}`;
  const lv = `"${p.name}";r=${Math.max(0, remaining ?? 0)};t=${reset}`;
  res.setHeader('RateLimit-Policy', policy ? `${String(policy)}, ${pv}` : pv);
  res.setHeader('RateLimit', limit ? `${String(limit)}, ${lv}` : lv);
}

/**
 * The anonymous quota's bucket of the client's address (Express's `req.ip`, so `trust proxy`
 * applies): an IPv4 address as it is (also when written IPv4-mapped, `::ffff:192.0.2.1`, as a
 * dual-stack socket reports it), an IPv6 address by its /56 network, the smallest block an ISP or
 * cloud hands one customer (express-rate-limit's default `ipv6Subnet`). QA: per full IPv6 address,
 * one host with a /64 had 2^64 anonymous quotas, and as many key guesses at 100 an hour each.
 */
export function clientIp(req: Request): string {
  return anonymousBucket(req.ip ?? req.socket.remoteAddress ?? 'unknown');
}

/**
 * The bucket of one address (see clientIp); anything that is not an IP address is its own bucket.
 * An address with a port (`198.51.100.7:50123`, `[2001:db8::1]:443`), as some proxies write
 * X-Forwarded-For (Azure App Service, IIS ARR), is its address: a port of its own per connection
 * gave one client a fresh anonymous quota, and fresh key guesses, on every connection (QA).
 */
export function anonymousBucket(given: string): string {
  const address = withoutPort(given);
  const family = isIP(address);
  if (family !== 6) return address;
  const groups = ipv6Groups(address);
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped) return ipv4Of(groups[6]!, groups[7]!);
  return `${groups.slice(0, 3).map((g) => g.toString(16)).join(':')}:${(groups[3]! & 0xff00).toString(16)}::/56`;
}

/** `a.b.c.d:port` → `a.b.c.d`, `[v6]:port` or `[v6]` → `v6`; anything else as it is. */
function withoutPort(address: string): string {
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(address);
  if (v4 && isIP(v4[1]!) === 4) return v4[1]!;
  const v6 = /^\[([0-9A-Fa-f:.]+(?:%[^\]]+)?)\](?::\d{1,5})?$/.exec(address);
  if (v6 && isIP(v6[1]!) === 6) return v6[1]!;
  return address;
}

/** The global quota middleware (after authenticate). Exempt paths and OPTIONS are not counted. */
export function quota(keeper: QuotaKeeper, isExempt: (path: string) => boolean): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'OPTIONS' || isExempt(req.path)) return next();
    keeper.charge(res, authOf(res), clientIp(req));
    next();
  };
}
