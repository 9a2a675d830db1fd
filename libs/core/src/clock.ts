/** Time is a dependency so domain rules (expiry, windows) can be tested with a fixed clock. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export const fixedClock = (at: Date | string): Clock & { set(at: Date | string): void; advance(ms: number): void } => {
  let current = new Date(at);
  return {
    now: () => new Date(current),
    set: (next) => {
      current = new Date(next);
    },
    advance: (ms) => {
      current = new Date(current.getTime() + ms);
    },
  };
};

/** A database timestamp (Date or string) as ISO-8601, keeping null. */
export const isoOrNull = (v: Date | string | null): string | null => (v === null ? null : new Date(v).toISOString());
