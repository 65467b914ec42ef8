/**
 * `baton run --command 'TEMPLATE'`: the template is split into argv here, quote-aware and
 * without a shell, and its placeholders `{mcpConfig}` `{promptFile}` `{prompt}` `{cardId}` `{workspace}`
 * are replaced inside the argv elements after the split, so a card's text is always part of one
 * argument and can never become a second one, a redirection or a command (no shell ever sees it).
 * `resolveProgram` checks that the program exists before anything starts.
 * Must not: run anything, or read a card.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

import { BatonError } from '../../core/errors';

/** The placeholders a template may use, in the order the docs list them. */
export const placeholders = ['mcpConfig', 'promptFile', 'prompt', 'cardId', 'workspace'] as const;
export type Placeholder = (typeof placeholders)[number];
export type PlaceholderValues = Record<Placeholder, string>;

/** One argv element: literal text and placeholders, joined when expanded. */
export type TemplatePart = { text: string } | { placeholder: Placeholder };
export type TemplateArg = TemplatePart[];

export interface CommandTemplate {
	/** The template as the user wrote it (for messages and the run's table). */
	text: string;
	/** The program: a name looked up on PATH, or a path (relative to where `baton run` started). */
	program: string;
	args: TemplateArg[];
}

const placeholderPattern = /\{([A-Za-z_][A-Za-z0-9_-]*)\}/g;

function isPlaceholder(name: string): name is Placeholder {
	return (placeholders as readonly string[]).includes(name);
}

const allowed = placeholders.map(p => `{${p}}`).join(' ');

function invalid(message: string): never {
	throw new BatonError('invalid_input', message);
}

/**
 * Splits `text` into words the way a POSIX shell splits a simple command, and nothing more: blanks
 * separate words; '…' keeps everything literally; "…" keeps everything but `\"` and `\\`; a backslash
 * outside quotes keeps the next character. `$`, `|`, `;`, `>`, backticks and globs are ordinary
 * characters (there is no shell to give them meaning). An unterminated quote is an error.
 */
export function splitWords(text: string): string[] {
	const words: string[] = [];
	let word = '';
	let inWord = false;
	let i = 0;
	while (i < text.length) {
		const c = text.charAt(i);
		if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
			if (inWord) {
				words.push(word);
				word = '';
				inWord = false;
			}
			i++;
		} else if (c === "'") {
			const end = text.indexOf("'", i + 1);
			if (end < 0) {
				invalid(`The command template has an unterminated ' (at character ${i + 1}): ${text}`);
			}
			word += text.slice(i + 1, end);
			inWord = true;
			i = end + 1;
		} else if (c === '"') {
			let j = i + 1;
			for (; j < text.length && text[j] !== '"'; j++) {
				if (text[j] === '\\' && (text[j + 1] === '"' || text[j + 1] === '\\')) {
					j++;
				}
				word += text.charAt(j);
			}
			if (j >= text.length) {
				invalid(`The command template has an unterminated " (at character ${i + 1}): ${text}`);
			}
			inWord = true;
			i = j + 1;
		} else if (c === '\\' && i + 1 < text.length) {
			word += text.charAt(i + 1);
			inWord = true;
			i += 2;
		} else {
			word += c;
			inWord = true;
			i++;
		}
	}
	if (inWord) {
		words.push(word);
	}
	return words;
}

function parseArg(word: string): TemplateArg {
	const parts: TemplateArg = [];
	let last = 0;
	for (const m of word.matchAll(placeholderPattern)) {
		const name = m[1] ?? '';
		if (!isPlaceholder(name)) {
			invalid(`The command template uses an unknown placeholder {${name}}; the allowed ones are ${allowed}.`);
		}
		if (m.index > last) {
			parts.push({ text: word.slice(last, m.index) });
		}
		parts.push({ placeholder: name });
		last = m.index + m[0].length;
	}
	if (last < word.length || parts.length === 0) {
		parts.push({ text: word.slice(last) });
	}
	return parts;
}

/** Parses and checks a `--command` template; throws invalid_input with one clear sentence. */
export function parseTemplate(text: string): CommandTemplate {
	const words = splitWords(text);
	const [program, ...rest] = words;
	if (program === undefined || program === '') {
		invalid(
			"The command template is empty: give the program to run, e.g. --command 'my-agent --mcp {mcpConfig} {prompt}'.",
		);
	}
	const args = rest.map(parseArg);
	const programParts = parseArg(program);
	if (programParts.some(p => 'placeholder' in p)) {
		invalid(
			`The command template's program (${program}) cannot be a placeholder: name the program, then pass ${allowed} as its arguments.`,
		);
	}
	return { text, program, args };
}

/** Which placeholders a template uses (the supervisor writes the prompt file only when it is asked for). */
export function usedPlaceholders(template: CommandTemplate): Set<Placeholder> {
	const used = new Set<Placeholder>();
	for (const arg of template.args) {
		for (const part of arg) {
			if ('placeholder' in part) {
				used.add(part.placeholder);
			}
		}
	}
	return used;
}

/** The argv after the program: each template word becomes exactly one element, whatever the values hold. */
export function expandArgs(args: readonly TemplateArg[], values: PlaceholderValues): string[] {
	return args.map(arg => arg.map(part => ('text' in part ? part.text : values[part.placeholder])).join(''));
}

function isExecutableFile(path: string): boolean {
	try {
		if (!statSync(path).isFile()) {
			return false;
		}
		accessSync(path, constants.X_OK);
		return true;
	} catch {
		return false;
	}
}

/**
 * The program's absolute path: a path (one with a `/`) is taken relative to `cwd` and must be an
 * executable file; a bare name is looked up on `pathVar` like execvp does. Throws invalid_input naming
 * the program and where it looked; `hint` (e.g. how to install it) ends the message.
 */
export function resolveProgram(
	program: string,
	options: { cwd: string; pathVar: string | undefined; hint?: string | undefined },
): string {
	const hint = options.hint === undefined ? '' : ` ${options.hint}`;
	if (program.includes('/')) {
		const path = isAbsolute(program) ? program : resolve(options.cwd, program);
		if (!isExecutableFile(path)) {
			invalid(`The agent program ${program} does not exist or is not executable (${path}).${hint}`);
		}
		return path;
	}
	for (const dir of (options.pathVar ?? '').split(delimiter)) {
		if (dir !== '' && isExecutableFile(join(dir, program))) {
			return join(dir, program);
		}
	}
	return invalid(`The agent program ${program} is not on PATH.${hint}`);
}
