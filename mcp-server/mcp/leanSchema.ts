/**
 * The compact input schema a tool advertises in tools/list. The full protocol schema (patterns,
 * lengths, ranges) stays the one that validates, inside toolHandler; the advertised copy keeps only
 * names, types, enums, required-ness and top-level descriptions (toolListing.ts also drops the
 * `additionalProperties` of `.strict()`), because the full JSON Schemas of 11 tools came to 13.4 KB
 * against a 6 KB budget (agents pay for tools/list on every turn).
 */
import { z } from 'zod';

type AnyObject = z.ZodObject<z.ZodRawShape>;

function leanType(schema: z.ZodType, describe: boolean): z.ZodType {
	let inner = schema;
	let optional = false;
	const outerDescription = schema.description;
	if (inner instanceof z.ZodOptional) {
		optional = true;
		inner = inner.unwrap() as z.ZodType;
	}
	let out: z.ZodType;
	if (inner instanceof z.ZodString) {
		out = z.string();
	} else if (inner instanceof z.ZodNumber) {
		// Not .int(): zod adds ±2^53 bounds to every integer, 60 bytes each; the full schema checks it.
		out = z.number();
	} else if (inner instanceof z.ZodBoolean) {
		out = z.boolean();
	} else if (inner instanceof z.ZodEnum) {
		out = z.enum(inner.options as [string, ...string[]]);
	} else if (inner instanceof z.ZodArray) {
		out = z.array(leanType(inner.element as z.ZodType, false));
	} else if (inner instanceof z.ZodObject) {
		out = leanObjectOf(inner, false);
	} else if (inner instanceof z.ZodUnion) {
		out = z.union((inner.options as z.ZodType[]).map(o => leanType(o, false)));
	} else {
		out = inner;
	}
	const description = outerDescription ?? inner.description;
	if (describe && description !== undefined) {
		out = out.describe(description);
	}
	return optional ? out.optional() : out;
}

function leanObjectOf(schema: AnyObject, describe: boolean, descriptions: Record<string, string> = {}): AnyObject {
	const shape: Record<string, z.ZodType> = {};
	for (const [key, field] of Object.entries(schema.shape)) {
		const lean = leanType(field as z.ZodType, describe);
		const short = descriptions[key];
		shape[key] = short === undefined ? lean : lean.describe(short);
	}
	return z.object(shape).strict();
}

/**
 * A strict object schema with the same fields and types as `schema`, without the detailed checks.
 * `descriptions` replaces the protocol's longer field descriptions with terser ones.
 */
export function leanObject(schema: AnyObject, descriptions: Record<string, string> = {}): AnyObject {
	return leanObjectOf(schema, true, descriptions);
}
