export const ARTIFACT_TYPES = ['dataset', 'model', 'system', 'output'] as const;
export type ArtifactType = (typeof ARTIFACT_TYPES)[number];
