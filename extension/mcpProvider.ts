/**
 * Registers Baton as an MCP server for VS Code's agent mode (issue item 6) through
 * `vscode.lm.registerMcpServerDefinitionProvider`. That API is final only from VS Code 1.101 while the
 * extension targets ^1.100.0 (so Cursor and other lagging editors can install it), so it is looked up
 * at run time and typed locally instead of through @types/vscode.
 */
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { BatonConfig } from './config';

/** The subset of the 1.101 API used here. */
interface McpApi {
	registerMcpServerDefinitionProvider(
		id: string,
		provider: {
			onDidChangeMcpServerDefinitions?: vscode.Event<void>;
			provideMcpServerDefinitions(token: vscode.CancellationToken): unknown[];
		},
	): vscode.Disposable;
}

type McpStdioServerDefinitionCtor = new (
	label: string,
	command: string,
	args?: string[],
	env?: Record<string, string | number | null>,
	version?: string,
) => unknown;

export type McpRegistration =
	| { registered: true; dispose(): void; refresh(config: BatonConfig): void }
	| { registered: false; reason: string; dispose(): void };

/** The provider id, as declared in package.json `contributes.mcpServerDefinitionProviders`. */
export const mcpProviderId = 'baton';

export function registerMcpProvider(extension: vscode.ExtensionContext, initial: BatonConfig): McpRegistration {
	const api = vscode as unknown as {
		lm?: Partial<McpApi>;
		McpStdioServerDefinition?: McpStdioServerDefinitionCtor;
	};
	const register = api.lm?.registerMcpServerDefinitionProvider;
	const Definition = api.McpStdioServerDefinition;
	// Before 1.101 the same name is a proposed API with another contribution point: a dev-mode
	// extension may reach it, an installed one may not. Only the final API counts.
	if (!isAtLeast(vscode.version, 1, 101) || typeof register !== 'function' || typeof Definition !== 'function') {
		return {
			registered: false,
			dispose: () => undefined,
			reason: `VS Code ${vscode.version} has no final MCP server definition provider API (it arrived in 1.101); use "Baton: Configure MCP for this Workspace" instead.`,
		};
	}
	let config = initial;
	const changed = new vscode.EventEmitter<void>();
	const declared = (extension.extension.packageJSON as { version?: unknown }).version;
	const version = typeof declared === 'string' ? declared : '0';
	const provider = {
		onDidChangeMcpServerDefinitions: changed.event,
		provideMcpServerDefinitions: () => {
			const env: Record<string, string> = { ELECTRON_RUN_AS_NODE: '1', BATON_DATA_DIR: config.dataDir };
			if (config.databaseUrl !== undefined) {
				env.DATABASE_URL = config.databaseUrl;
			}
			// VS Code's own runtime runs the server as Node: no separate Node install needed.
			return [
				new Definition(
					'Baton',
					process.execPath,
					[join(extension.extensionPath, 'dist', 'baton.js'), 'mcp'],
					env,
					version,
				),
			];
		},
	};
	let registration: vscode.Disposable;
	try {
		registration = register.call(api.lm, mcpProviderId, provider);
	} catch (e) {
		changed.dispose();
		return {
			registered: false,
			dispose: () => undefined,
			reason: `VS Code refused the Baton MCP server provider: ${e instanceof Error ? e.message : String(e)}`,
		};
	}
	return {
		registered: true,
		refresh: next => {
			config = next;
			changed.fire();
		},
		dispose: () => {
			registration.dispose();
			changed.dispose();
		},
	};
}

/** "1.100.3" >= 1.101? */
function isAtLeast(version: string, major: number, minor: number): boolean {
	const [a = 0, b = 0] = version.split('.').map(n => Number.parseInt(n, 10));
	return a > major || (a === major && b >= minor);
}
