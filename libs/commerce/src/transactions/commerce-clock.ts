/** The clock commerce decisions read (a fixed one in specs). */
export const COMMERCE_CLOCK = Symbol('COMMERCE_CLOCK');
