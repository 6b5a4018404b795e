import type { EffectivePolicy } from './engine.js';

/**
 * The SPEC's default SLA matrix, by priority key. A tenant's priority without a stored policy uses
 * the row of its key (a priority with another key uses `normal`'s), so every tenant has the
 * defaults from its first minute without rows being written at creation.
 */
export const DEFAULT_WARN_PERCENT = 80;

export const DEFAULT_POLICIES: Readonly<Record<string, EffectivePolicy>> = {
  urgent: { first_response_minutes: 15, next_response_minutes: 30, resolution_minutes: 240, respect_business_hours: false, warn_percent: DEFAULT_WARN_PERCENT },
  high: { first_response_minutes: 60, next_response_minutes: 120, resolution_minutes: 480, respect_business_hours: true, warn_percent: DEFAULT_WARN_PERCENT },
  normal: { first_response_minutes: 240, next_response_minutes: 480, resolution_minutes: 1440, respect_business_hours: true, warn_percent: DEFAULT_WARN_PERCENT },
  low: { first_response_minutes: 480, next_response_minutes: 1440, resolution_minutes: 2880, respect_business_hours: true, warn_percent: DEFAULT_WARN_PERCENT },
};

export function defaultPolicyFor(priorityKey: string): EffectivePolicy {
  return DEFAULT_POLICIES[priorityKey] ?? DEFAULT_POLICIES.normal!;
}
