import { z } from 'zod';
import { apiOutput } from '@app/http';

/** The shapes of a timeline's anchor in the OpenAPI document: the signed record, and the verdict on a timeline's end. */

/** Built with the record signature and hash shapes commerce.openapi.ts names, so the anchor's are the same components. */
export function timelineAnchorSchemas(recordSignature: z.ZodType, hashTagged: () => z.ZodString) {
  const paymentTimelineAnchorSchema = apiOutput(
    'PaymentTimelineAnchor',
    z
      .object({
        schema_version: z.literal('payment_timeline_anchor.v1'),
        payload: z.object({
          transaction_id: z.string(),
          authorization_id: z.string(),
          organization_id: z.string(),
          stream_id: z.string(),
          terminal_status: z.enum(['rejected', 'declined', 'expired', 'receipt_issued']),
          terminal_event_type: z.string(),
          last_event_revision: z.number().int().describe('the revision of the terminal event this anchor follows'),
          event_count: z.number().int().describe('how many events the timeline has before its anchor'),
          last_event_hash: hashTagged().describe('the hash of the terminal event: the one hash the chain may end on before its anchor'),
          issuer: z.string(),
          anchored_at: z.string(),
        }),
        record_hash: hashTagged().describe('SHA-256 of the RFC 8785 bytes of payload'),
        signature: recordSignature,
      })
      .describe('The signed anchor that ends a terminal timeline (the data of its last event, timeline.anchored): verify offline against /.well-known/signing-keys.json'),
  );

  const timelineAnchorVerdict = z
    .object({
      valid: z.boolean(),
      state: z
        .enum(['anchored', 'open', 'missing', 'pending', 'mismatch', 'misplaced', 'signature_invalid', 'truncated'])
        .describe(
          'anchored: terminal, and its anchor holds. open: not terminal yet (nothing to anchor). Invalid: missing (a terminal event without the anchor after it), mismatch (the anchor names another hash, revision, status or stream), misplaced (an anchor not right after the terminal event, or events after it), signature_invalid, truncated (the stream is shorter than the service recorded it, or has lost its terminal event). pending: terminal and never anchored; the service anchors it as it answers, so a response does not show it unless that failed',
        ),
      terminal_status: z.string().nullable(),
      revision: z.number().int().nullable().describe('the revision of the anchor event'),
      key_id: z.string().nullable(),
      detail: z.string().nullable().describe('why the end is invalid, in words'),
      record: paymentTimelineAnchorSchema.nullable(),
    })
    .describe("The timeline's end: a terminal timeline must end with its signed anchor");
  return { paymentTimelineAnchorSchema, timelineAnchorVerdict };
}
