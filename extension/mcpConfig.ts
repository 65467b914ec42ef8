/**
 * "Configure MCP for Claude Code / Cursor / this workspace" (issue item 4): builds the Baton server
 * entry for that client's project config file, shows the resulting file, and writes it only after
 * the user agrees. The merge itself is core/formats/mcpConfig.ts's, shared with `baton init`: existing entries
 * of other servers are kept; a file that is not valid JSON (or has comments) is refused, never overwritten.
 */
import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { BatonError } from '../core/errors';
import { type McpClient, type McpLaunch, mcpClients, mergeMcpConfig } from '../core/formats/mcpConfig';
import type { BatonConfig } from './config';

/** The clients the extension configures: core/formats/mcpConfig.ts's, under the name the commands use. */
export type McpTarget = McpClient;

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
			`Open a folder first: the ${mcpClients[target].label} MCP config lives in the project.`,
		);
	}
	const file = join(folder.uri.fsPath, mcpClients[target].file);
	const explicitDataDir = vscode.workspace.getConfiguration('baton').get<string>('dataDir', '').trim() !== '';
	const existing = existsSync(file) ? await readFile(file, 'utf8') : undefined;
	const text = mergeMcpConfig(target, existing, batonLaunch(extensionPath, config, explicitDataDir), file);
	if (confirm) {
		const preview = await vscode.workspace.openTextDocument({ language: 'jsonc', content: text });
		await vscode.window.showTextDocument(preview, { preview: true, viewColumn: vscode.ViewColumn.Beside });
		const choice = await vscode.window.showInformationMessage(
			`Write this to ${mcpClients[target].file}?`,
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
