// What a used-up model budget means, said the same way by `svc gateway budget` and the dashboard.
import type { GatewayBudgetView } from './rest-shapes.js';

/** "model requests get 429 until ..." once the period's total is at or past the limit, else null. */
export function budgetRefusal({ budget, used }: GatewayBudgetView): string | null {
  if (budget.max_tokens === null || used.period_tokens < budget.max_tokens) return null;
  return `model requests get 429 ${budget.period === 'total' ? 'until the limit is raised' : `until the next ${budget.period} (UTC) or a higher limit`}`;
}
