/**
 * JSON Schema (as produced by zod's toJSONSchema) to a Kubernetes structural schema:
 * everything inline, a type on every node, `nullable: true` instead of null types,
 * `x-kubernetes-preserve-unknown-fields` for free-form values, no additionalProperties
 * beside properties. Anything it cannot express structurally is an error, not a guess.
 */
export type JsonSchema = { [key: string]: unknown };

/** Keywords copied as they are, in the order they are written. */
const KEPT = [
  'type',
  'description',
  'nullable',
  'default',
  'enum',
  'format',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'required',
];
const K8S_EXTENSION = /^x-kubernetes-/;
/** zod's integer bounds: noise in a CRD. */
const SAFE_INTEGER_LIMIT = Number.MAX_SAFE_INTEGER;

export class StructuralSchemaError extends Error {
  constructor(path: string, message: string) {
    super(`${path || '<root>'}: ${message}`);
    this.name = 'StructuralSchemaError';
  }
}

function isNullSchema(s: unknown): boolean {
  return typeof s === 'object' && s !== null && (s as JsonSchema).type === 'null';
}

/** Folds `type: [T, "null"]` and `anyOf: [S, {type: null}]` into S with nullable: true. */
function foldNullable(node: JsonSchema, path: string): JsonSchema {
  if (Array.isArray(node.type)) {
    const types = node.type.filter((t) => t !== 'null');
    if (types.length !== 1) throw new StructuralSchemaError(path, `a node needs exactly one type, got ${JSON.stringify(node.type)}`);
    return { ...node, type: types[0], ...(types.length < node.type.length ? { nullable: true } : {}) };
  }
  const alternatives = (node.anyOf ?? node.oneOf) as unknown[] | undefined;
  if (alternatives) {
    const others = alternatives.filter((s) => !isNullSchema(s));
    if (others.length !== 1 || others.length === alternatives.length) {
      throw new StructuralSchemaError(path, 'unions are not structural: model alternatives as optional fields');
    }
    const { anyOf: _a, oneOf: _o, ...rest } = node;
    return { ...(others[0] as JsonSchema), ...rest, nullable: true };
  }
  return node;
}

export function toStructural(input: JsonSchema, path = ''): JsonSchema {
  if (input.$ref !== undefined) throw new StructuralSchemaError(path, '$ref is not allowed: inline the schema');
  if (input.allOf !== undefined || input.not !== undefined) throw new StructuralSchemaError(path, 'allOf/not are not supported');
  const node = foldNullable(input, path);
  const out: JsonSchema = {};
  for (const key of KEPT) if (node[key] !== undefined) out[key] = node[key];
  for (const key of Object.keys(node).sort()) if (K8S_EXTENSION.test(key)) out[key] = node[key];
  if (out.format === 'date-time') delete out.pattern;
  for (const bound of ['minimum', 'maximum'] as const) {
    if (typeof out[bound] === 'number' && Math.abs(out[bound] as number) >= SAFE_INTEGER_LIMIT) delete out[bound];
  }
  if (out.type === undefined) {
    // zod's z.unknown() / z.any(): an arbitrary value.
    if (Object.keys(out).some((k) => k !== 'description' && k !== 'default')) {
      throw new StructuralSchemaError(path, 'a node without a type may only preserve unknown fields');
    }
    return { ...out, 'x-kubernetes-preserve-unknown-fields': true };
  }
  if (out.type === 'object') {
    const properties = node.properties as Record<string, JsonSchema> | undefined;
    const additional = node.additionalProperties;
    if (properties) {
      out.properties = Object.fromEntries(
        Object.entries(properties).map(([name, child]) => [name, toStructural(child, `${path}.${name}`)]),
      );
    }
    if (additional !== undefined && additional !== false) {
      if (properties && Object.keys(properties).length > 0) {
        throw new StructuralSchemaError(path, 'additionalProperties beside properties is not structural');
      }
      const valueSchema = additional === true ? {} : (additional as JsonSchema);
      const converted = toStructural(valueSchema, `${path}.*`);
      if (converted['x-kubernetes-preserve-unknown-fields'] === true && converted.type === undefined) {
        out['x-kubernetes-preserve-unknown-fields'] = true;
      } else {
        out.additionalProperties = converted;
      }
    }
    if (!properties && additional === undefined) out['x-kubernetes-preserve-unknown-fields'] = true;
  }
  if (out.type === 'array') {
    if (node.items === undefined || Array.isArray(node.items)) throw new StructuralSchemaError(path, 'an array needs one items schema');
    out.items = toStructural(node.items as JsonSchema, `${path}[]`);
  }
  if (Array.isArray(out.required) && out.required.length === 0) delete out.required;
  return out;
}
