import { z } from 'zod';
import { ConditionsSchema } from './conditions.js';

/** SPEC §2.1 slug pattern (triggers, templates, agent names). */
export const SLUG_PATTERN = /^[a-z0-9][a-z0-9_-]{0,127}$/;
/** SPEC §2.1 secret-env pattern. */
export const SECRET_ENV_PATTERN = /^[A-Z_][A-Z0-9_]*$/;
/** Environment variable names (SPEC §2.1 env-name pattern). */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const timestamp = () => z.iso.datetime();

export const LocalObjectReferenceSchema = z
  .object({ name: z.string().min(1).describe('Name of the referenced object in the same namespace.') })
  .describe('A reference to an object in the same namespace.');
export type LocalObjectReference = z.infer<typeof LocalObjectReferenceSchema>;

export const localRef = (what: string) => LocalObjectReferenceSchema.describe(what);

/** Fields every status carries. */
export const statusBase = {
  observedGeneration: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('metadata.generation the controller last acted on.'),
  conditions: ConditionsSchema.optional(),
};
