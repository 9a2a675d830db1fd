/**
 * Group commit for hot paths: calls made while `maxInFlight` batches are running wait and go
 * together in the next one (at most `maxBatch` items), so under load one statement serves many
 * concurrent deliveries, and when idle an item goes at once (next turn of the event loop).
 * `run` answers one result per item, in order; if it throws, every item of that batch rejects.
 */
export class Batcher<T, R> {
  private queue: { item: T; resolve: (r: R) => void; reject: (err: unknown) => void }[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly run: (items: T[]) => Promise<R[]>,
    private readonly options: { maxBatch: number; maxInFlight: number },
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Items waiting for a batch, and batches running. */
  get pending(): { queued: number; inFlight: number } {
    return { queued: this.queue.length, inFlight: this.inFlight };
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    // Let the calls of this turn of the event loop join the batch.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      this.inFlight++;
      Promise.resolve()
        .then(() => this.run(batch.map((b) => b.item)))
        .then(
          (results) => batch.forEach((b, i) => b.resolve(results[i])),
          (err) => batch.forEach((b) => b.reject(err)),
        )
        .finally(() => {
          this.inFlight--;
          this.schedule();
        });
    }
  }
}
