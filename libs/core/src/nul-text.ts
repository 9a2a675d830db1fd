/**
 * Where a value holds U+0000: PostgreSQL's text (and jsonb) cannot store it, so a NUL that reaches
 * a column is a database error, not an answer. The steps (property names, array indices) to the
 * first string or property name that holds one, else null; nothing deeper than 64 levels is read.
 */
export function nulTextSteps(value: unknown, depth = 0): Array<string | number> | null {
  if (typeof value === 'string') return value.includes('\u0000') ? [] : null;
  if (value === null || typeof value !== 'object' || depth > 64) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulTextSteps(value[i], depth + 1);
      if (found !== null) return [i, ...found];
    }
    return null;
  }
  for (const [key, child] of Object.entries(value)) {
    if (key.includes('\u0000')) return [key];
    const found = nulTextSteps(child, depth + 1);
    if (found !== null) return [key, ...found];
  }
  return null;
}

/**
 * nulTextSteps as a path (`b[2].c`; '' for the value itself). The fuzz suite found a NUL in a
 * key's `owner`; rather than each field of each schema refusing it, requests are checked once.
 */
export function nulTextPath(value: unknown): string | null {
  const steps = nulTextSteps(value);
  return steps && steps.reduce<string>((path, step) => (typeof step === 'number' ? `${path}[${step}]` : path ? `${path}.${step}` : step), '');
}
