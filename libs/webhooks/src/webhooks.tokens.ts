/** The clock webhook handlers read (a fixed one in specs). */
export const WEBHOOKS_CLOCK = Symbol('WEBHOOKS_CLOCK');
