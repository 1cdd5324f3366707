// Budgets this replica has just written (the data path's hint to read counters fresh).
/**
 * Budgets this replica wrote a moment ago: the data path reads a project's counters fresh only
 * when its cached ledger holds a budget, and the cache may not have seen this replica's own
 * PUT yet.
 */
export class BudgetHints {
  private readonly written = new Map<string, number>();
  touched(projectUid: string): void {
    this.written.set(projectUid, Date.now());
    if (this.written.size > 10_000) this.written.delete(this.written.keys().next().value!);
  }
  recent(projectUid: string): boolean {
    const at = this.written.get(projectUid);
    return at !== undefined && Date.now() - at < 60_000;
  }
}
