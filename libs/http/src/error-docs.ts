import { ERROR_CATALOG } from './error-catalog';

/** docs/errors.md's generated section lies between these two lines. */
export const ERROR_TABLE_START = '<!-- error-table:start (generated from libs/http/src/error-catalog.ts by `npm run docs:errors`; do not edit) -->';
export const ERROR_TABLE_END = '<!-- error-table:end -->';

/** The catalog as a Markdown table, in the catalog's order: status, code, retryable, when. */
export function errorTableMarkdown(): string {
  const rows = Object.entries(ERROR_CATALOG).map(([code, e]) => `| ${e.status} | \`${code}\` | ${e.retryable ? 'yes' : 'no'} | ${e.when} |`);
  return ['| status | code | retryable | when |', '|---|---|---|---|', ...rows].join('\n');
}

/** `doc` with the section between the markers replaced by the current table; throws when a marker is missing. */
export function withErrorTable(doc: string): string {
  const start = doc.indexOf(ERROR_TABLE_START);
  const end = doc.indexOf(ERROR_TABLE_END);
  if (start < 0 || end < start) throw new Error(`docs/errors.md needs the lines ${ERROR_TABLE_START} and ${ERROR_TABLE_END}`);
  return `${doc.slice(0, start + ERROR_TABLE_START.length)}\n${errorTableMarkdown()}\n${doc.slice(end)}`;
}
