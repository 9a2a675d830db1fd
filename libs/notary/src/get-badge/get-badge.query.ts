/** A certificate's badge (GET /api/badge/{certificate_id}, `.svg` for the image). */
export class GetBadgeQuery {
  constructor(readonly certificateId: string) {}
}
