/** Settle an authorized transaction through its provider (POST /api/cdp/transactions/{id}/execute). */
export class ExecutePaymentCommand {
  constructor(
    readonly orgId: string,
    readonly transactionId: string,
    /** `api_key:<key_id>`. */
    readonly actor: string,
  ) {}
}
