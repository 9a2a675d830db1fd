/**
 * Where a request's JSON holds U+0000: PostgreSQL's text (and jsonb) cannot store it, so a NUL
 * that reaches a read-model column is a 500, not an answer. The fuzz suite found it in a key's
 * `owner`; rather than each field of each schema refusing it, requests are checked once.
 * Returns the path of the first string (or property name) that holds one, else null.
 */
export function nulTextPath(value: unknown, path = '', depth = 0): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (value === null || typeof value !== 'object' || depth > 64) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulTextPath(value[i], `${path}[${i}]`, depth + 1);
      if (found !== null) return found;
    }
    return null;
  }
  for (const [key, child] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (key.includes('\u0000')) return at;
    const found = nulTextPath(child, at, depth + 1);
    if (found !== null) return found;
  }
  return null;
}
