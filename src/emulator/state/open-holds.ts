/**
 * Requests' holds not yet settled: each one's id, workspace and cost in slots of arrays, a settled
 * one's slot used again, so taking and settling a hold allocates nothing kept. A Map entry set and
 * deleted per request rebuilt the Map's table every few requests, and V8 keeps a rebuilt-away table
 * linked to the next (for live iterators): once one was old, every later table and each hold it held
 * outlived young collections. As many slots as requests were in flight at once; found by a scan of them.
 */
export class OpenHolds {
  /** A slot's hold id; 0: free (ids start at 1). */
  private readonly ids: number[] = [];
  private readonly workspaces: (string | null)[] = [];
  private readonly costs: number[] = [];
  private readonly free: number[] = [];
  size = 0;

  set(id: number, workspace: string, cost: number): void {
    this.take(id);
    const i = this.free.pop() ?? this.ids.length;
    this.ids[i] = id;
    this.workspaces[i] = workspace;
    this.costs[i] = cost;
    this.size++;
  }

  /** The hold's cost, and it is open no more; undefined when it is not open. */
  take(id: number): number | undefined {
    const i = id === 0 ? -1 : this.ids.indexOf(id);
    if (i < 0) return undefined;
    const cost = this.costs[i]!;
    this.ids[i] = 0;
    this.workspaces[i] = null;
    this.costs[i] = 0;
    this.free.push(i);
    this.size--;
    return cost;
  }

  /** The holds open, by id (as state.json keeps them). */
  record(): Record<string, { w: string; c: number }> {
    const open: Record<string, { w: string; c: number }> = {};
    for (let i = 0; i < this.ids.length; i++) if (this.ids[i]) open[this.ids[i]!] = { w: this.workspaces[i]!, c: this.costs[i]! };
    return open;
  }
}
