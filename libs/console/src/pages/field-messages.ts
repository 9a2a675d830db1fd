import { esc } from './layout';

/** One entry of the API's 400 `details`: the field's path (`limits.USD.review_above_cents`) and what is wrong. */
export interface FieldIssue {
  field: string;
  message: string;
}

/** The `details` of an error envelope as field issues (anything else in it is ignored). */
export function issuesOf(details: unknown): FieldIssue[] {
  if (!Array.isArray(details)) return [];
  return details
    .filter((d): d is { field?: unknown; message?: unknown } => typeof d === 'object' && d !== null)
    .map((d) => ({ field: typeof d.field === 'string' ? d.field : '', message: typeof d.message === 'string' ? d.message : 'is invalid' }));
}

/** A form's refusal: its sentence, and the messages of each field, shown beside the inputs that hold them. */
export interface FormProblem {
  message: string;
  issues: FieldIssue[];
}

/** Does `issue` belong to the input named `field` ("event_types.2" belongs to "event_types")? */
const under = (issue: string, field: string) => issue === field || issue.startsWith(`${field}.`);

/**
 * Field messages for one form: the summary at its top (each message linking to its input), and
 * the message under each input, which the input names in aria-describedby so a screen reader
 * reads it with the field.
 */
export class FieldMessages {
  constructor(
    readonly problem: FormProblem | null,
    /** The form's inputs: field path → the input's id. */
    private readonly inputs: Record<string, string> = {},
  ) {}

  of(field: string): FieldIssue[] {
    return this.problem ? this.problem.issues.filter((i) => under(i.field, field)) : [];
  }

  /** aria-invalid and aria-describedby for the input of `field`. */
  attrs(field: string): string {
    return this.of(field).length ? ` aria-invalid="true" aria-describedby="err-${esc(this.inputs[field] ?? field)}"` : '';
  }

  /** The messages under the input of `field` (nothing when it has none). */
  under(field: string): string {
    const issues = this.of(field);
    if (!issues.length) return '';
    const text = issues.map((i) => (i.field === field ? i.message : `${i.field.slice(field.length + 1)}: ${i.message}`)).join('; ');
    return `<p class="field-error" id="err-${esc(this.inputs[field] ?? field)}" data-field="${esc(field)}">${esc(text)}</p>`;
  }

  /** The summary: the sentence, then every issue (linked to its input when the form has one). */
  summary(): string {
    if (!this.problem) return '';
    const known = Object.keys(this.inputs);
    const items = this.problem.issues.map((i) => {
      const owner = known.find((f) => under(i.field, f));
      const label = `<code>${esc(i.field || '(the whole form)')}</code>: ${esc(i.message)}`;
      return `<li data-field="${esc(i.field)}">${owner ? `<a href="#${esc(this.inputs[owner])}">${label}</a>` : label}</li>`;
    });
    return `<div class="form-errors" role="alert" id="form-errors"><p>${esc(this.problem.message)}</p>${items.length ? `<ul>${items.join('')}</ul>` : ''}</div>`;
  }
}
