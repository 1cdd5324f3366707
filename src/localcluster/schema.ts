// Structural openAPIV3Schema handling for custom resources, in the order the real server
// uses: prune unknown fields, apply defaults, validate. Error wording follows the server's.
import type { StatusCause } from './status.js';

export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  nullable?: boolean;
  default?: unknown;
  allOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  not?: JsonSchema;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  [key: string]: unknown;
}

type Json = unknown;
const isObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
const ROOT_META = new Set(['apiVersion', 'kind', 'metadata']);

/** Removes fields the schema does not declare (in place); returns their paths. */
export function prune(value: Json, schema: JsonSchema, path = '', root = true): string[] {
  const pruned: string[] = [];
  walkPrune(value, schema, path, root, pruned);
  return pruned;
}

function walkPrune(value: Json, schema: JsonSchema, path: string, root: boolean, pruned: string[]): void {
  if (Array.isArray(value)) {
    if (schema.items) value.forEach((v, i) => walkPrune(v, schema.items!, `${path}[${i}]`, false, pruned));
    return;
  }
  if (!isObject(value)) return;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = schema['x-kubernetes-embedded-resource'] === true;
  for (const key of Object.keys(value)) {
    const childPath = path ? `${path}.${key}` : key;
    if ((root || embedded) && ROOT_META.has(key)) continue;
    const child = value[key];
    const sub = schema.properties?.[key] ?? (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
    if (sub) {
      if (child === null && !sub.nullable) {
        delete value[key];
        continue;
      }
      walkPrune(child, sub, childPath, false, pruned);
    } else if (!preserve && schema.additionalProperties !== true) {
      delete value[key];
      pruned.push(childPath);
    }
  }
}

/** Fills absent fields that have a `default` (in place). */
export function applyDefaults(value: Json, schema: JsonSchema): void {
  if (Array.isArray(value)) {
    if (schema.items) for (const v of value) applyDefaults(v, schema.items);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, sub] of Object.entries(schema.properties ?? {})) {
    if (value[key] === undefined && sub.default !== undefined) value[key] = structuredClone(sub.default);
    if (value[key] !== undefined) applyDefaults(value[key], sub);
  }
  if (isObject(schema.additionalProperties)) {
    for (const key of Object.keys(value)) if (!schema.properties?.[key]) applyDefaults(value[key], schema.additionalProperties);
  }
}

const show = (v: Json): string => (typeof v === 'string' ? JSON.stringify(v) : isObject(v) || Array.isArray(v) ? JSON.stringify(v) : String(v));

function typeOk(type: string | undefined, v: Json, schema: JsonSchema): boolean {
  if (schema['x-kubernetes-int-or-string']) return typeof v === 'string' || Number.isInteger(v);
  switch (type) {
    case 'object': return isObject(v);
    case 'array': return Array.isArray(v);
    case 'string': return typeof v === 'string';
    case 'integer': return Number.isInteger(v);
    case 'number': return typeof v === 'number';
    case 'boolean': return typeof v === 'boolean';
    default: return true;
  }
}

/** Validates `value` against `schema`; returns the causes of a 422 (empty when valid). */
export function validate(value: Json, schema: JsonSchema, path = ''): StatusCause[] {
  const causes: StatusCause[] = [];
  walkValidate(value, schema, path, causes, true);
  return causes;
}

function walkValidate(v: Json, s: JsonSchema, path: string, out: StatusCause[], root = false): void {
  const field = path;
  const at = path || '<root>';
  const invalid = (detail: string) => out.push({ reason: 'FieldValueInvalid', field, message: `Invalid value: ${show(v)}: ${at} in body ${detail}` });
  if (v === null) {
    if (!s.nullable && s.type) out.push({ reason: 'FieldValueTypeInvalid', field, message: `Invalid value: "null": ${at} in body must be of type ${s.type}: "null"` });
    return;
  }
  if (!typeOk(s.type, v, s)) {
    const type = s['x-kubernetes-int-or-string'] ? 'integer or string' : s.type;
    out.push({ reason: 'FieldValueTypeInvalid', field, message: `Invalid value: "${typeName(v)}": ${at} in body must be of type ${type}: "${typeName(v)}"` });
    return;
  }
  if (s.enum && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(v))) {
    out.push({ reason: 'FieldValueNotSupported', field, message: `Unsupported value: ${show(v)}: supported values: ${s.enum.map(show).join(', ')}` });
  }
  if (typeof v === 'string') {
    if (s.minLength !== undefined && [...v].length < s.minLength) invalid(`should be at least ${s.minLength} chars long`);
    if (s.maxLength !== undefined && [...v].length > s.maxLength) out.push({ reason: 'FieldValueTooLong', field, message: `Too long: may not be more than ${s.maxLength} bytes` });
    if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(v)) invalid(`should match '${s.pattern}'`);
  }
  if (typeof v === 'number') {
    if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum)) invalid(`should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`);
    if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum)) invalid(`should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}`);
  }
  if (Array.isArray(v)) {
    if (s.minItems !== undefined && v.length < s.minItems) invalid(`should have at least ${s.minItems} items`);
    if (s.maxItems !== undefined && v.length > s.maxItems) out.push({ reason: 'FieldValueTooMany', field, message: `Too many: ${v.length}: must have at most ${s.maxItems} items` });
    if (s.items) v.forEach((item, i) => walkValidate(item, s.items!, `${path}[${i}]`, out));
  }
  if (isObject(v)) {
    for (const req of s.required ?? []) {
      if (v[req] === undefined) out.push({ reason: 'FieldValueRequired', field: path ? `${path}.${req}` : req, message: 'Required value' });
    }
    const n = Object.keys(v).length;
    if (s.minProperties !== undefined && n < s.minProperties) invalid(`should have at least ${s.minProperties} properties`);
    if (s.maxProperties !== undefined && n > s.maxProperties) invalid(`should have at most ${s.maxProperties} properties`);
    for (const [key, child] of Object.entries(v)) {
      if (root && ROOT_META.has(key)) continue;
      const sub = s.properties?.[key] ?? (isObject(s.additionalProperties) ? s.additionalProperties : undefined);
      if (sub) walkValidate(child, sub, path ? `${path}.${key}` : key, out);
    }
  }
  for (const sub of s.allOf ?? []) walkValidate(v, sub, path, out);
  if (s.anyOf && !s.anyOf.some((sub) => validate(v, sub, path).length === 0)) invalid('must validate at least one schema (anyOf)');
  if (s.oneOf && s.oneOf.filter((sub) => validate(v, sub, path).length === 0).length !== 1) invalid('must validate one and only one schema (oneOf)');
  if (s.not && validate(v, s.not, path).length === 0) invalid('must not validate the schema (not)');
}

function typeName(v: Json): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}
