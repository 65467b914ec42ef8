/**
 * "Configure MCP for …" commands: write Baton's MCP server entry for Claude Code, Cursor or this
 * workspace, through the configureMcp the context carries (extension/mcpConfig.ts does the merging).
 * No file handling here.
 */
import type * as vscode from 'vscode';
import { commandIds } from './ids';
import { type CommandKit, optionsOf } from './kit';

export function registerMcpCommands(kit: CommandKit): vscode.Disposable[] {
	const { ctx, register } = kit;

	return [
		register(commandIds.configureMcpClaudeCode, async arg =>
			ctx.configureMcp('claude-code', optionsOf(arg).confirm !== false),
		),
		register(commandIds.configureMcpCursor, async arg => ctx.configureMcp('cursor', optionsOf(arg).confirm !== false)),
		register(commandIds.configureMcpWorkspace, async arg =>
			ctx.configureMcp('vscode', optionsOf(arg).confirm !== false),
		),
	];
}
