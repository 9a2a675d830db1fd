/** The clock sessions and links expire by (a fixed one in specs). */
export const CONSOLE_CLOCK = Symbol('CONSOLE_CLOCK');
