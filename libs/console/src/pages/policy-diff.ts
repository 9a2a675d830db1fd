import { diffLines } from 'diff';
import { canonicalJson } from '@app/crypto';

/** A policy as the console shows it and diffs it: its RFC 8785 form (keys sorted), indented by two. */
export const prettyPolicy = (policy: unknown): string => `${JSON.stringify(JSON.parse(canonicalJson(policy)), null, 2)}\n`;

export interface DiffLine {
  /** `too_different`: the first line of a diff given up on (see below); the page says so in words. */
  kind: 'same' | 'added' | 'removed' | 'too_different';
  text: string;
}

/**
 * jsdiff's cost grows with the square of the edit distance, on the request's thread: past this many
 * line edits, or this many milliseconds, it gives up and the page shows both versions whole.
 */
export const DIFF_MAX_EDIT_LENGTH = 2_000;
export const DIFF_TIMEOUT_MS = 200;

/**
 * The lines of `after` against `before` (jsdiff's line diff, an LCS: the `diff` package). Both are
 * the canonical pretty form, so a key moved in the document typed is no change here. Bounded:
 * see DIFF_MAX_EDIT_LENGTH.
 */
export function policyDiff(before: unknown, after: unknown): DiffLine[] {
  const [a, b] = [prettyPolicy(before), prettyPolicy(after)];
  const parts = diffLines(a, b, { maxEditLength: DIFF_MAX_EDIT_LENGTH, timeout: DIFF_TIMEOUT_MS });
  if (!parts) {
    // Too different to show line by line: the old version as removed, the new one as added.
    const whole = (text: string, kind: 'added' | 'removed') => text.replace(/\n$/, '').split('\n').map((t) => ({ kind, text: t }));
    return [{ kind: 'too_different', text: 'The versions are too different to show line by line; both are shown whole.' }, ...whole(a, 'removed'), ...whole(b, 'added')];
  }
  const out: DiffLine[] = [];
  for (const part of parts) {
    const kind = part.added ? 'added' : part.removed ? 'removed' : 'same';
    const lines = part.value.replace(/\n$/, '').split('\n');
    for (const text of lines) out.push({ kind, text });
  }
  return out;
}
