/**
 * The Baton entry of an MCP client's project config file (`.mcp.json`, `.cursor/mcp.json`,
 * `.vscode/mcp.json`), merged into the file's existing text. Shared by the extension's "Configure
 * MCP" commands and `baton init` so the two never drift. Pure: text in, text out; no file system,
 * no host APIs. Everything but the `baton` entry is kept byte for byte (core/jsonEdit.ts edits the
 * text in place, in the file's indentation and line endings); a file that is not a JSON object, or
 * JSON with comments, is refused, never rewritten.
 */
import { BatonError } from './errors';
import { setJsonMember } from './jsonEdit';

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

/**
 * The text with `//` and `/* *\/` comments and trailing commas removed, strings left alone; used only
 * to tell "JSON with comments" from "not JSON" in the refusal.
 */
export function stripJsonc(text: string): string {
	let out = '';
	for (let i = 0; i < text.length; i++) {
		const c = text.charAt(i);
		if (c === '"') {
			const start = i;
			for (i++; i < text.length && text[i] !== '"'; i++) {
				if (text[i] === '\\') {
					i++;
				}
			}
			out += text.slice(start, i + 1);
		} else if (c === '/' && text[i + 1] === '/') {
			while (i < text.length && text[i] !== '\n') {
				i++;
			}
			out += '\n';
		} else if (c === '/' && text[i + 1] === '*') {
			const end = text.indexOf('*/', i + 2);
			i = end === -1 ? text.length : end + 1;
		} else {
			out += c;
		}
	}
	return out.replace(/,(\s*[}\]])/g, '$1');
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

/**
 * The `baton` entry `text` already has for `client`, or undefined (also when `text` is missing or
 * not a JSON object: mergeMcpConfig is the one that refuses those).
 */
export function currentEntry(client: McpClient, text: string | undefined): unknown {
	try {
		const root: unknown = JSON.parse(withoutBom(text ?? ''));
		const servers: unknown = (root as Record<string, unknown> | null)?.[mcpClients[client].key];
		return typeof servers === 'object' && servers !== null
			? (servers as Record<string, unknown>)[mcpServerName]
			: undefined;
	} catch {
		return undefined;
	}
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
	let root: Record<string, unknown> = {};
	if (existing !== undefined && existing.trim() !== '') {
		let parsed: unknown;
		try {
			parsed = JSON.parse(withoutBom(existing));
		} catch {
			let jsonc = false;
			try {
				JSON.parse(stripJsonc(withoutBom(existing)));
				jsonc = true;
			} catch {
				// Not JSONC either: the plain refusal below.
			}
			refuse(
				file,
				jsonc
					? 'has comments or trailing commas (JSONC), which would be lost if it were rewritten'
					: 'is not valid JSON',
				client,
				launch,
			);
		}
		if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
			refuse(file, 'does not hold a JSON object', client, launch);
		}
		root = parsed as Record<string, unknown>;
	}
	const servers = root[key] ?? {};
	if (typeof servers !== 'object' || Array.isArray(servers)) {
		refuse(file, `has a "${key}" that is not a JSON object`, client, launch);
	}
	const current = (servers as Record<string, unknown>)[mcpServerName];
	if (existing !== undefined && current !== undefined && sameJson(current, entry)) {
		return existing;
	}
	root[key] = { ...servers, [mcpServerName]: entry };
	const fresh = `${JSON.stringify(root, null, 2)}\n`;
	if (existing === undefined || existing.trim() === '') {
		return fresh;
	}
	// Edit the text in place so other entries keep their formatting; the parse below is the proof
	// that the edit means what `root` means (else the whole file is written out again).
	const eol = existing.includes('\r\n') ? '\r\n' : '\n';
	let text = setJsonMember(existing, [key, mcpServerName], entry, detectIndent(existing));
	text = text.endsWith('\n') ? text : `${text}${eol}`;
	try {
		return sameJson(JSON.parse(withoutBom(text)), root) ? text : fresh;
	} catch {
		return fresh;
	}
}
