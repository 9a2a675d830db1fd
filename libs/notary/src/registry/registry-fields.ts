import { z } from 'zod';

/** The registry's text fields, as registering and editing an entry both take them. */
export const registryText = (max: number) => z.string().trim().min(1).max(max);
export const registryTags = z.array(registryText(40)).max(20);
