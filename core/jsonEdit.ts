/**
 * Sets one member of a JSON document in its text, leaving every other byte where it was: the edit
 * behind core/mcpConfig.ts, so `baton init` and the extension add their entry to a config file without
 * reformatting the user's other servers. Pure. The input must be valid JSON (callers JSON.parse it
 * first): the scanner does not check syntax, and it knows no comments.
 */

interface Member {
	key: string;
	keyStart: number;
	valueStart: number;
	valueEnd: number;
}

interface ObjectSpan {
	start: number;
	/** Index of the closing brace. */
	end: number;
	members: Member[];
}

function skipSpace(text: string, i: number): number {
	while (i < text.length && /\s/.test(text.charAt(i))) {
		i++;
	}
	return i;
}

/** `i` at an opening quote; returns the index after the closing one. */
function skipString(text: string, i: number): number {
	for (i++; i < text.length && text.charAt(i) !== '"'; i++) {
		if (text.charAt(i) === '\\') {
			i++;
		}
	}
	return i + 1;
}

/** `i` at the start of a value; returns the index after it. */
function skipValue(text: string, i: number): number {
	const c = text.charAt(i);
	if (c === '"') {
		return skipString(text, i);
	}
	if (c === '{' || c === '[') {
		let depth = 0;
		while (i < text.length) {
			const d = text.charAt(i);
			if (d === '"') {
				i = skipString(text, i);
				continue;
			}
			if (d === '{' || d === '[') {
				depth++;
			} else if (d === '}' || d === ']') {
				depth--;
			}
			i++;
			if (depth === 0) {
				return i;
			}
		}
		return i;
	}
	while (i < text.length && !/[\s,\]}]/.test(text.charAt(i))) {
		i++;
	}
	return i;
}

/** The object whose `{` is at `start`, with its members' spans. */
function readObject(text: string, start: number): ObjectSpan {
	const members: Member[] = [];
	let i = start + 1;
	for (;;) {
		i = skipSpace(text, i);
		const c = text.charAt(i);
		if (c === '}' || i >= text.length) {
			return { start, end: i, members };
		}
		if (c === ',') {
			i++;
			continue;
		}
		const keyEnd = skipString(text, i);
		const key = JSON.parse(text.slice(i, keyEnd)) as string;
		const valueStart = skipSpace(text, skipSpace(text, keyEnd) + 1);
		const valueEnd = skipValue(text, valueStart);
		members.push({ key, keyStart: i, valueStart, valueEnd });
		i = valueEnd;
	}
}

/** The whitespace that starts the line holding `pos`. */
function lineIndent(text: string, pos: number): string {
	const lineStart = text.lastIndexOf('\n', pos - 1) + 1;
	return /^[ \t]*/.exec(text.slice(lineStart))?.[0] ?? '';
}

function render(value: unknown, base: string, unit: string, eol: string): string {
	return JSON.stringify(value, null, unit).replace(/\n/g, `${eol}${base}`);
}

/**
 * `text` (a JSON object) with the member at `path` set to `value`, creating the objects on the way;
 * a non-object on the way is replaced. New members go after the last one, indented like it (or one
 * `unit` deeper than an empty object's line); a one-line object with members, or in a one-line file,
 * gets a one-line member.
 */
export function setJsonMember(text: string, path: readonly string[], value: unknown, unit: string): string {
	const eol = text.includes('\r\n') ? '\r\n' : '\n';
	let obj = readObject(text, skipSpace(text, 0));
	for (let depth = 0; depth < path.length; depth++) {
		const key = path[depth] ?? '';
		const nested = path.slice(depth + 1).reduceRight<unknown>((v, k) => ({ [k]: v }), value);
		// JSON.parse keeps the last of duplicate keys; so does this.
		const member = obj.members.filter(m => m.key === key).at(-1);
		if (member !== undefined && depth < path.length - 1 && text.charAt(member.valueStart) === '{') {
			obj = readObject(text, member.valueStart);
			continue;
		}
		// An empty `{}` in a multi-line file opens up like its neighbours; a one-line file stays one line.
		const oneLine =
			!text.slice(obj.start, obj.end).includes('\n') && (obj.members.length > 0 || !text.trimEnd().includes('\n'));
		if (member !== undefined) {
			const rendered = oneLine ? JSON.stringify(nested) : render(nested, lineIndent(text, member.keyStart), unit, eol);
			return `${text.slice(0, member.valueStart)}${rendered}${text.slice(member.valueEnd)}`;
		}
		const last = obj.members.at(-1);
		if (oneLine) {
			const entry = `${JSON.stringify(key)}: ${JSON.stringify(nested)}`;
			return last === undefined
				? `${text.slice(0, obj.start + 1)}${entry}${text.slice(obj.end)}`
				: `${text.slice(0, last.valueEnd)}, ${entry}${text.slice(last.valueEnd)}`;
		}
		if (last !== undefined) {
			const indent = lineIndent(text, last.keyStart);
			const entry = `${JSON.stringify(key)}: ${render(nested, indent, unit, eol)}`;
			return `${text.slice(0, last.valueEnd)},${eol}${indent}${entry}${text.slice(last.valueEnd)}`;
		}
		const outer = lineIndent(text, obj.start);
		const entry = `${JSON.stringify(key)}: ${render(nested, outer + unit, unit, eol)}`;
		return `${text.slice(0, obj.start + 1)}${eol}${outer}${unit}${entry}${eol}${outer}${text.slice(obj.end)}`;
	}
	return text;
}
