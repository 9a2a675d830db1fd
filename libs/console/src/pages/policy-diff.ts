import { diffLines } from 'diff';
import { canonicalJson } from '@app/crypto';

/** A policy as the console shows it and diffs it: its RFC 8785 form (keys sorted), indented by two. */
export const prettyPolicy = (policy: unknown): string => `${JSON.stringify(JSON.parse(canonicalJson(policy)), null, 2)}\n`;

export interface DiffLine {
  kind: 'same' | 'added' | 'removed';
  text: string;
}

/**
 * The lines of `after` against `before` (jsdiff's line diff, an LCS: the `diff` package). Both are
 * the canonical pretty form, so a key moved in the document typed is no change here.
 */
export function policyDiff(before: unknown, after: unknown): DiffLine[] {
  const out: DiffLine[] = [];
  for (const part of diffLines(prettyPolicy(before), prettyPolicy(after))) {
    const kind = part.added ? 'added' : part.removed ? 'removed' : 'same';
    const lines = part.value.replace(/\n$/, '').split('\n');
    for (const text of lines) out.push({ kind, text });
  }
  return out;
}
