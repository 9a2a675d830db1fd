/** A synthetic dataset certified on a fresh sandbox organization (POST /api/sandbox/datasets). */
export class GenerateSandboxDatasetCommand {
  constructor(readonly seed: number) {}
}
