/**
 * CLI flags derived from the protocol. `paramFlags` binds fields of a method's params
 * schema to flags: each flag's type, repeatability, help text, bounds and whether it is required come
 * from the field's zod schema, and its value is converted, checked with that schema and returned under
 * the field's name, typed, ready for the request. `cliFlags` declares the CLI's own flags (files,
 * paging, --next, --json) and reads them just as typed. Commands never read a flag by a string name.
 *
 * Errors: a value that is not of the flag's type is a usage error (exit 2, as before), a value the
 * schema refuses (out of range, bad id) is `invalid_input` (exit 1, as the hub refused it before),
 * now naming the flag and before any hub is started.
 */
import { z } from 'zod';

import { BatonError, describeIssues } from '../../core/errors';
import type { CommandContext, OptionSpec } from './command';
import { UsageError } from './output';

type AnyObject = z.ZodObject<z.ZodRawShape>;
type Values = CommandContext['values'];

/** A set of flags: what parseArgs and --help get, and a typed reader of their values. */
export interface Flags<V> {
	readonly options: Record<string, OptionSpec>;
	read(values: Values): V;
}

/** How one field becomes a flag; what is not given here comes from the field's schema. */
export interface FieldFlag {
	/** Default: the field name in kebab-case (maxAttempts -> --max-attempts). */
	flag?: string;
	short?: string;
	/** Placeholder in help; default N for numbers, TEXT otherwise. */
	value?: string;
	/** Default: the field's `.describe()`. For words only the CLI needs (--next, "default"). */
	description?: string;
	/** A boolean flag that sends false: --no-retry for `retry`. */
	negate?: boolean;
	/** A list flag whose values are kept whole instead of split on commas (criteria hold commas). */
	whole?: boolean;
	/** A word that stands for null, e.g. "default" for the backlog setting (omitted where null is refused). */
	nullWord?: string;
}

type Bindings<S extends AnyObject> = { readonly [K in keyof S['shape']]?: FieldFlag };
type Out<S extends AnyObject, K extends keyof S['shape']> = z.output<S['shape'][K]>;

/** Fields read from flags: required where the schema requires them, else present only when given. */
export type FlagParams<S extends AnyObject, B> = {
	[K in keyof B & keyof S['shape'] as undefined extends Out<S, K> ? never : K]: Out<S, K>;
} & {
	[K in keyof B & keyof S['shape'] as undefined extends Out<S, K> ? K : never]?: Exclude<Out<S, K>, undefined>;
};

type Kind =
	| { type: 'number'; int: boolean; min: number; max: number }
	| { type: 'boolean' }
	| { type: 'string'; choices: readonly string[] | undefined }
	/**
	 * `array` checks the items; `single`: the field also takes one bare value (status: "ready" or
	 * ["ready", "done"]), sent when one is given.
	 */
	| { type: 'list'; array: z.ZodType; single: boolean; choices: readonly string[] | undefined };

interface FieldInfo {
	kind: Kind;
	optional: boolean;
	nullable: boolean;
	description: string | undefined;
}

function choicesOf(schema: z.ZodType): readonly string[] | undefined {
	return schema instanceof z.ZodEnum ? (schema.options as string[]) : undefined;
}

/** Reads a field's schema: its kind, bounds, optional/nullable and the nearest description. */
function fieldInfo(field: z.ZodType): FieldInfo {
	let inner = field;
	let optional = false;
	let nullable = false;
	let description = inner.description;
	for (;;) {
		if (inner instanceof z.ZodOptional || inner instanceof z.ZodDefault) {
			optional = true;
		} else if (inner instanceof z.ZodNullable) {
			nullable = true;
		} else {
			break;
		}
		inner = inner.unwrap() as z.ZodType;
		description ??= inner.description;
	}
	let kind: Kind;
	if (inner instanceof z.ZodNumber) {
		// zod marks integers by format: safeint (.int()), int32 or uint32.
		kind = {
			type: 'number',
			int: (inner.format ?? '').includes('int'),
			min: inner.minValue ?? -Infinity,
			max: inner.maxValue ?? Infinity,
		};
	} else if (inner instanceof z.ZodBoolean) {
		kind = { type: 'boolean' };
	} else if (inner instanceof z.ZodArray) {
		kind = { type: 'list', array: inner, single: false, choices: choicesOf(inner.element as z.ZodType) };
	} else if (inner instanceof z.ZodUnion) {
		const options = inner.options as z.ZodType[];
		const array = options.find(o => o instanceof z.ZodArray);
		const one = options.find(o => !(o instanceof z.ZodArray));
		kind =
			array === undefined
				? { type: 'string', choices: undefined }
				: { type: 'list', array, single: one !== undefined, choices: one === undefined ? undefined : choicesOf(one) };
	} else {
		kind = { type: 'string', choices: choicesOf(inner) };
	}
	return { kind, optional, nullable, description };
}

function kebab(name: string): string {
	return name.replace(/[A-Z]/g, c => `-${c.toLowerCase()}`);
}

/** Bounds worth printing: zod gives every integer ±2^53 ones. */
function boundsText(kind: Kind): string | undefined {
	if (
		kind.type !== 'number' ||
		!(Math.abs(kind.min) < Number.MAX_SAFE_INTEGER) ||
		!(kind.max < Number.MAX_SAFE_INTEGER)
	) {
		return undefined;
	}
	return `${kind.min}–${kind.max}`;
}

function helpText(info: FieldInfo, binding: FieldFlag): string {
	const notes: string[] = [];
	const bounds = boundsText(info.kind);
	if (bounds !== undefined) {
		notes.push(bounds);
	}
	if ((info.kind.type === 'list' || info.kind.type === 'string') && info.kind.choices !== undefined) {
		notes.push(info.kind.choices.join(', '));
	}
	if (info.kind.type === 'list') {
		notes.push(binding.whole === true ? 'repeatable' : 'comma-separated');
	}
	if (!info.optional) {
		notes.push('required');
	}
	const text = binding.description ?? info.description ?? '';
	if (notes.length === 0) {
		return text;
	}
	// "At most this many (default 50; 1–1000)", not two parentheses in a row.
	return text.endsWith(')')
		? `${text.slice(0, -1)}; ${notes.join('; ')})`
		: `${text} (${notes.join('; ')})`.trimStart();
}

function optionOf(info: FieldInfo, binding: FieldFlag): OptionSpec {
	const boolean = info.kind.type === 'boolean';
	return {
		type: boolean ? 'boolean' : 'string',
		...(binding.short === undefined ? {} : { short: binding.short }),
		...(info.kind.type === 'list' ? { multiple: true } : {}),
		...(boolean ? {} : { value: binding.value ?? (info.kind.type === 'number' ? 'N' : 'TEXT') }),
		description: helpText(info, binding),
	};
}

/** "a,b" -> ["a", "b"], but a scope glob's braces stay whole: "src/{a,b}/**,x" -> ["src/{a,b}/**", "x"]. */
function splitCommas(text: string): string[] {
	const items: string[] = [];
	let depth = 0;
	let start = 0;
	for (let i = 0; i < text.length; i++) {
		const c = text[i];
		if (c === '{') {
			depth++;
		} else if (c === '}' && depth > 0) {
			depth--;
		} else if (c === ',' && depth === 0) {
			items.push(text.slice(start, i));
			start = i + 1;
		}
	}
	items.push(text.slice(start));
	return items;
}

/** The flag's raw value in the field's type; undefined when the flag was not given. */
function convert(flag: string, raw: Values[string], info: FieldInfo, binding: FieldFlag): unknown {
	if (raw === undefined) {
		return undefined;
	}
	const { kind } = info;
	if (kind.type === 'boolean') {
		return binding.negate !== true;
	}
	const texts = (Array.isArray(raw) ? raw : [raw]).filter((x): x is string => typeof x === 'string');
	if (kind.type === 'list') {
		const items = texts
			.flatMap(x => (binding.whole === true ? [x] : splitCommas(x)))
			.map(x => (binding.whole === true ? x : x.trim()))
			.filter(x => x !== '');
		return items;
	}
	const text = texts.at(-1) ?? '';
	if (binding.nullWord !== undefined && text.trim() === binding.nullWord) {
		return info.nullable ? null : undefined;
	}
	if (kind.type === 'string') {
		return text;
	}
	const trimmed = text.trim();
	if (kind.int ? !/^-?\d+$/.test(trimmed) : !Number.isFinite(Number(trimmed)) || trimmed === '') {
		const unit = flag.endsWith('-seconds') ? ' of seconds' : '';
		const or = binding.nullWord === undefined ? '' : ` or "${binding.nullWord}"`;
		throw new UsageError(`--${flag} must be a ${kind.int ? 'whole number' : 'number'}${unit}${or}, got "${text}".`);
	}
	return Number(trimmed);
}

/** `"bad cap!": capabilities look like …`: a list item named by its value rather than its index. */
function describeValueIssues(value: unknown, issues: readonly z.core.$ZodIssue[]): string {
	return describeIssues(
		issues.map(issue => {
			const [index, ...rest] = issue.path;
			if (Array.isArray(value) && typeof index === 'number') {
				return { ...issue, path: [JSON.stringify(value[index]), ...rest] };
			}
			return issue;
		}),
	);
}

/**
 * Flags for fields of `schema`, keyed by field name. `read` returns the given ones under their field
 * names, each parsed with its field's schema (so the CLI refuses what the hub, the MCP tools and the
 * board refuse, in the same words), and refuses a missing required one as a usage error.
 */
export function paramFlags<S extends AnyObject, const B extends Bindings<S>>(
	schema: S,
	bindings: B,
): Flags<FlagParams<S, B>> {
	const fields = Object.entries(bindings as Record<string, FieldFlag>).map(([field, binding]) => {
		const fieldSchema = schema.shape[field] as z.ZodType;
		return { field, binding, fieldSchema, flag: binding.flag ?? kebab(field), info: fieldInfo(fieldSchema) };
	});
	return {
		options: Object.fromEntries(fields.map(f => [f.flag, optionOf(f.info, f.binding)])),
		read(values) {
			const out: Record<string, unknown> = {};
			for (const { field, binding, fieldSchema, flag, info } of fields) {
				const value = convert(flag, values[flag], info, binding);
				if (value === undefined) {
					if (!info.optional) {
						throw new UsageError(`--${flag} is required.`);
					}
					continue;
				}
				const { kind } = info;
				const parsed = (kind.type === 'list' ? kind.array : fieldSchema).safeParse(value);
				if (!parsed.success) {
					const text = describeValueIssues(value, parsed.error.issues);
					throw new BatonError('invalid_input', `--${flag}${text.startsWith('"') ? ' ' : ': '}${text}`, {
						flag,
						issues: parsed.error.issues,
					});
				}
				const data: unknown = parsed.data;
				out[field] = kind.type === 'list' && kind.single && Array.isArray(data) && data.length === 1 ? data[0] : data;
			}
			return out as FlagParams<S, B>;
		},
	};
}

type CliValue<O extends OptionSpec> = O['type'] extends 'boolean'
	? boolean
	: O['multiple'] extends true
		? string[] | undefined
		: string | undefined;

/** The CLI's own flags, keyed by camelCase name (bodyFile -> --body-file), read typed. */
export function cliFlags<const O extends Record<string, OptionSpec>>(
	options: O,
): Flags<{ -readonly [K in keyof O]: CliValue<O[K]> }> {
	const entries = Object.entries(options).map(([key, spec]) => [key, kebab(key), spec] as const);
	return {
		options: Object.fromEntries(entries.map(([, flag, spec]) => [flag, spec])),
		read(values) {
			const out: Record<string, unknown> = {};
			for (const [key, flag, spec] of entries) {
				const raw = values[flag];
				if (spec.type === 'boolean') {
					out[key] = raw === true;
				} else if (raw !== undefined) {
					const texts = (Array.isArray(raw) ? raw : [raw]).filter((x): x is string => typeof x === 'string');
					out[key] = spec.multiple === true ? texts : texts.at(-1);
				}
			}
			return out as { -readonly [K in keyof O]: CliValue<O[K]> };
		},
	};
}
