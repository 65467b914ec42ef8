/**
 * "Configure MCP for Claude Code / Cursor / this workspace" (issue item 4): builds the Baton server
 * entry for that client's project config file, shows the resulting file, and writes it only after
 * the user agrees. Existing entries of other servers are kept; a file that is not valid JSON is
 * refused, never overwritten.
 */
import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { BatonError } from '../core/errors';
import type { BatonConfig } from './config';

export type McpTarget = 'claude-code' | 'cursor' | 'vscode';

export interface McpLaunch {
	command: string;
	args: string[];
	env: Record<string, string>;
}

const targets: Record<McpTarget, { label: string; file: string; key: 'mcpServers' | 'servers' }> = {
	'claude-code': { label: 'Claude Code', file: '.mcp.json', key: 'mcpServers' },
	cursor: { label: 'Cursor', file: '.cursor/mcp.json', key: 'mcpServers' },
	vscode: { label: 'VS Code (this workspace)', file: '.vscode/mcp.json', key: 'servers' },
};

function onPath(program: string): boolean {
	for (const dir of (process.env.PATH ?? '').split(delimiter)) {
		try {
			if (dir !== '' && statSync(join(dir, program)).isFile()) {
				return true;
			}
		} catch {
			// Not in this folder.
		}
	}
	return false;
}

/**
 * How an agent starts `baton mcp`: the `baton` on PATH when there is one (it survives extension
 * updates), else this extension's bundle run by VS Code's runtime as Node.
 */
export function batonLaunch(extensionPath: string, config: BatonConfig, explicitDataDir: boolean): McpLaunch {
	const env: Record<string, string> = {};
	if (explicitDataDir) {
		env.BATON_DATA_DIR = config.dataDir;
	}
	if (onPath('baton')) {
		return { command: 'baton', args: ['mcp'], env };
	}
	return {
		command: process.execPath,
		args: [join(extensionPath, 'dist', 'baton.js'), 'mcp'],
		env: { ...env, ELECTRON_RUN_AS_NODE: '1' },
	};
}

/** The config file's new text: `existing` with the `baton` entry set, everything else kept. */
export function mergeMcpConfig(
	target: McpTarget,
	existing: string | undefined,
	launch: McpLaunch,
	file: string,
): string {
	let root: Record<string, unknown> = {};
	if (existing !== undefined && existing.trim() !== '') {
		let parsed: unknown;
		try {
			parsed = JSON.parse(existing);
		} catch {
			throw new BatonError(
				'invalid_input',
				`${file} is not valid JSON; fix or remove it, then run this command again.`,
			);
		}
		if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
			throw new BatonError(
				'invalid_input',
				`${file} does not hold a JSON object; fix or remove it, then run this command again.`,
			);
		}
		root = parsed as Record<string, unknown>;
	}
	const key = targets[target].key;
	const servers = root[key];
	const entry: Record<string, unknown> =
		target === 'vscode'
			? { type: 'stdio', command: launch.command, args: launch.args }
			: { command: launch.command, args: launch.args };
	if (Object.keys(launch.env).length > 0) {
		entry.env = launch.env;
	}
	root[key] = { ...(typeof servers === 'object' && servers !== null ? servers : {}), baton: entry };
	return `${JSON.stringify(root, null, '\t')}\n`;
}

/** Shows the file it would write and writes it on "Write"; returns the path written, if any. */
export async function configureMcp(
	target: McpTarget,
	extensionPath: string,
	config: BatonConfig,
	confirm: boolean,
	log: vscode.LogOutputChannel,
): Promise<string | undefined> {
	const folder = vscode.workspace.workspaceFolders?.[0];
	if (!folder) {
		throw new BatonError(
			'invalid_input',
			`Open a folder first: the ${targets[target].label} MCP config lives in the project.`,
		);
	}
	const file = join(folder.uri.fsPath, targets[target].file);
	const explicitDataDir = vscode.workspace.getConfiguration('baton').get<string>('dataDir', '').trim() !== '';
	const existing = existsSync(file) ? await readFile(file, 'utf8') : undefined;
	const text = mergeMcpConfig(target, existing, batonLaunch(extensionPath, config, explicitDataDir), file);
	if (confirm) {
		const preview = await vscode.workspace.openTextDocument({ language: 'jsonc', content: text });
		await vscode.window.showTextDocument(preview, { preview: true, viewColumn: vscode.ViewColumn.Beside });
		const choice = await vscode.window.showInformationMessage(
			`Write this to ${targets[target].file}?`,
			{
				modal: true,
				detail: `${existing === undefined ? 'Creates' : 'Updates the "baton" entry of'} ${file}. ${
					config.databaseUrl === undefined
						? ''
						: 'DATABASE_URL is not written to the file; set it in the environment of the agent.'
				}`,
			},
			'Write',
		);
		if (choice !== 'Write') {
			return undefined;
		}
	}
	await mkdir(dirname(file), { recursive: true });
	await writeFile(file, text, 'utf8');
	log.info(`Wrote the Baton MCP server entry to ${file}.`);
	if (confirm) {
		await vscode.window.showTextDocument(vscode.Uri.file(file));
	}
	return file;
}
