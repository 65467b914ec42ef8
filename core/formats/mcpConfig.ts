/**
 * The Baton entry of an MCP client's project config file (`.mcp.json`, `.cursor/mcp.json`,
 * `.vscode/mcp.json`), merged into the file's existing text. Shared by the extension's "Configure
 * MCP" commands and `baton init` so the two never drift. Pure: text in, text out; no file system,
 * no host APIs. Everything but the `baton` entry is kept as it was, comments and trailing commas
 * included: jsonc-parser (the library VS Code edits its own settings files with) edits the text in
 * place, in the file's indentation and line endings. A file that is not JSON(C) or not an object is
 * refused, never rewritten.
 */
import { type Edit, type ParseError, applyEdits, modify, parse, printParseErrorCode } from 'jsonc-parser';
import { BatonError } from '../errors';

/** The MCP clients whose project config Baton writes. */
export type McpClient = 'claude-code' | 'cursor' | 'vscode';

export const mcpClientIds: readonly McpClient[] = ['claude-code', 'cursor', 'vscode'];

export const mcpClients: Record<McpClient, { label: string; file: string; key: 'mcpServers' | 'servers' }> = {
	'claude-code': { label: 'Claude Code', file: '.mcp.json', key: 'mcpServers' },
	cursor: { label: 'Cursor', file: '.cursor/mcp.json', key: 'mcpServers' },
	vscode: { label: 'VS Code', file: '.vscode/mcp.json', key: 'servers' },
};

/** How the client starts `baton mcp`. */
export interface McpLaunch {
	command: string;
	args: string[];
	env: Record<string, string>;
}

/** The server's name in every config file. */
export const mcpServerName = 'baton';

/** The `baton` entry in `client`'s format (VS Code wants `"type": "stdio"`); env only when set. */
export function mcpEntry(client: McpClient, launch: McpLaunch): Record<string, unknown> {
	const entry: Record<string, unknown> =
		client === 'vscode'
			? { type: 'stdio', command: launch.command, args: launch.args }
			: { command: launch.command, args: launch.args };
	if (Object.keys(launch.env).length > 0) {
		entry.env = launch.env;
	}
	return entry;
}

/** Same JSON value, key order ignored. */
function sameJson(a: unknown, b: unknown): boolean {
	if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
		return a === b;
	}
	if (Array.isArray(a) || Array.isArray(b)) {
		return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
	}
	const ka = Object.keys(a);
	const rb = b as Record<string, unknown>;
	return (
		ka.length === Object.keys(b).length &&
		ka.every(k => Object.hasOwn(rb, k) && sameJson((a as Record<string, unknown>)[k], rb[k]))
	);
}

/** The file's indentation unit (a tab or some spaces) from its first indented line; 2 spaces if none. */
export function detectIndent(text: string): string {
	const ws = /\n([ \t]+)\S/.exec(text)?.[1];
	if (ws === undefined) {
		return '  ';
	}
	return ws.startsWith('\t') ? '\t' : ' '.repeat(Math.min(ws.length, 8));
}

/** JSON.parse refuses a byte order mark, which some Windows editors write; the edit keeps it. */
function withoutBom(text: string): string {
	return text.startsWith('\uFEFF') ? text.slice(1) : text;
}

/** JSON with comments and trailing commas, as VS Code reads its own config files; the first error, if any. */
function parseJsonc(text: string): { value: unknown; error?: string } {
	const errors: ParseError[] = [];
	const value: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
	const first = errors[0];
	if (first === undefined) {
		return { value };
	}
	const line = text.slice(0, first.offset).split('\n').length;
	return { value, error: `${printParseErrorCode(first.error)} on line ${line}` };
}

/**
 * The `baton` entry `text` already has for `client`, or undefined (also when `text` is missing or
 * not a JSON object: mergeMcpConfig is the one that refuses those).
 */
export function currentEntry(client: McpClient, text: string | undefined): unknown {
	const root = parseJsonc(withoutBom(text ?? '')).value;
	const servers: unknown =
		typeof root === 'object' && root !== null ? (root as Record<string, unknown>)[mcpClients[client].key] : undefined;
	return typeof servers === 'object' && servers !== null
		? (servers as Record<string, unknown>)[mcpServerName]
		: undefined;
}

function refuse(file: string, problem: string, client: McpClient, launch: McpLaunch): never {
	const entry = JSON.stringify({ [mcpServerName]: mcpEntry(client, launch) });
	throw new BatonError(
		'invalid_input',
		`${file} ${problem}. Nothing was written. Fix it or remove it and run again, or add this under "${mcpClients[client].key}" by hand: ${entry.slice(1, -1)}`,
		{ file },
	);
}

/**
 * jsonc-parser's edit in the file's own layout: it inserts compact JSON (its formatter would also
 * reformat the neighbouring entries on the lines it touches), so the new member is laid out here, one
 * line per value at the file's indentation, or left compact in a one-line file.
 */
function laidOut(body: string, edit: Edit, path: string[], value: unknown): Edit {
	if (!body.trim().includes('\n')) {
		return edit;
	}
	const unit = detectIndent(body);
	const eol = body.includes('\r\n') ? '\r\n' : '\n';
	const depth = path.length;
	const pretty = JSON.stringify(value, null, unit)
		.split('\n')
		.join(eol + unit.repeat(depth));
	if (edit.length > 0 && !edit.content.startsWith(',')) {
		return { ...edit, content: pretty };
	}
	const member = `${edit.content.startsWith(',') ? ',' : ''}${eol}${unit.repeat(depth)}${JSON.stringify(path[depth - 1])}: ${pretty}`;
	// Into an empty `{}` on one line: the closing brace goes on a line of its own.
	const closesOnLine = /^[ \t]*\}/.test(body.slice(edit.offset + edit.length));
	return { ...edit, content: closesOnLine ? `${member}${eol}${unit.repeat(depth - 1)}` : member };
}

/**
 * The config file's new text: `existing` (undefined when there is no file) with the `baton` entry
 * set and everything else kept. Returns `existing` itself, byte for byte, when its entry is already
 * this one, so a second run changes nothing. `file` names the file in refusals.
 */
export function mergeMcpConfig(
	client: McpClient,
	existing: string | undefined,
	launch: McpLaunch,
	file: string,
): string {
	const key = mcpClients[client].key;
	const entry = mcpEntry(client, launch);
	const body = withoutBom(existing ?? '');
	if (existing === undefined || body.trim() === '') {
		return `${JSON.stringify({ [key]: { [mcpServerName]: entry } }, null, 2)}\n`;
	}
	const { value: root, error } = parseJsonc(body);
	if (error !== undefined) {
		refuse(file, `is not valid JSON (${error})`, client, launch);
	}
	if (typeof root !== 'object' || root === null || Array.isArray(root)) {
		refuse(file, 'does not hold a JSON object', client, launch);
	}
	const servers = (root as Record<string, unknown>)[key] ?? null;
	if (servers !== null && (typeof servers !== 'object' || Array.isArray(servers))) {
		refuse(file, `has a "${key}" that is not a JSON object`, client, launch);
	}
	const current = (servers as Record<string, unknown> | null)?.[mcpServerName];
	if (current !== undefined && sameJson(current, entry)) {
		return existing;
	}
	// Edit the text in place so other entries keep their formatting and comments; the parse below is
	// the proof that the edit means what was asked (a refusal, never a guess, if it does not).
	const path = servers === null ? [key] : [key, mcpServerName];
	const value = servers === null ? { [mcpServerName]: entry } : entry;
	const edits = modify(body, path, value, {}).map(edit => laidOut(body, edit, path, value));
	let text = applyEdits(body, edits);
	text = text.endsWith('\n') ? text : `${text}${body.includes('\r\n') ? '\r\n' : '\n'}`;
	const expected = { ...(root as Record<string, unknown>), [key]: { ...(servers ?? {}), [mcpServerName]: entry } };
	const check = parseJsonc(text);
	if (check.error !== undefined || !sameJson(check.value, expected)) {
		refuse(file, 'could not be edited in place', client, launch);
	}
	return existing.startsWith('\uFEFF') ? `\uFEFF${text}` : text;
}
