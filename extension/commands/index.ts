/**
 * Every command of the extension (issue item 4), registered in one call from main.ts. Commands that
 * act on a card take it from the tree item they were invoked on, a card id argument, or a quick pick
 * whose items say what will happen. Each returns the hub's result (the tests run them through
 * `executeCommand`); errors are shown once, with Retry and Show Log (kit.ts `register`). The commands
 * live by concern in the modules beside this one; this file only wires them and re-exports the ids.
 */
import type * as vscode from 'vscode';
import { registerCardEditCommands } from './cardEdits';
import { registerClaimCycleCommands } from './claimCycle';
import { registerPauseCommands } from './pauses';
import { registerRunCommands } from './runs';
import { type CommandContext, makeCommandKit } from './kit';
import { registerMcpCommands } from './mcp';
import { registerReviewCommands } from './review';
import { registerViewCommands } from './views';

export { commandIds, contextKeys, viewIds } from './ids';
export { type CardCommandOptions, type CommandContext, type DispatchParts, cardIdOf } from './kit';

export function registerCommands(ctx: CommandContext): vscode.Disposable[] {
	const kit = makeCommandKit(ctx);
	return [
		...registerClaimCycleCommands(kit),
		...registerCardEditCommands(kit),
		...registerViewCommands(kit),
		...registerMcpCommands(kit),
		...registerReviewCommands(kit),
		...registerRunCommands(kit),
		...registerPauseCommands(kit),
	];
}
