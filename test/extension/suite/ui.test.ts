/**
 * The real workbench through Playwright (vscodeShim.js runs uiChecks.ts on this very page): the
 * extension switches to a clean demo backlog (a live data-dir change), three MCP agents work on it,
 * and the tree rows, the status bar item and the board webview (sidebar and editor tab) must show
 * it; the editor view is saved as docs/vscode.png.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import * as vscode from 'vscode';
import { after, before, describe, it } from './harness';
import { api, callTool, env, mcpAgent, uiCheck, waitFor } from './helpers';

type Mcp = Awaited<ReturnType<typeof mcpAgent>>;

const hostile = '<img src=x onerror=alert(1)>';
const plan = [
	{
		id: 'AUTH-1',
		title: 'Add rate limiting to the login API',
		phase: 'auth',
		priority: 8,
		acceptance: ['429 after 5 failed attempts in a minute'],
	},
	{ id: 'AUTH-2', title: 'Password reset e-mails', phase: 'auth', priority: 6, dependsOn: ['AUTH-1'] },
	{ id: 'AUTH-3', title: 'Session cookie hardening', phase: 'auth', priority: 5 },
	{ id: 'API-1', title: 'Paginate GET /cards', phase: 'api', priority: 7 },
	{ id: 'API-2', title: 'OpenAPI schema for v2', phase: 'api', priority: 4, dependsOn: ['API-1'] },
	{ id: 'API-3', title: 'Set up the CI pipeline', phase: 'api', priority: 9 },
	{ id: 'UI-1', title: 'Dark theme for the board', phase: 'ui', priority: 3 },
	{ id: 'UI-2', title: hostile, phase: 'ui', priority: 2, body: 'Card text is always rendered as text.' },
	{ id: 'UI-3', title: 'Keyboard shortcuts cheat sheet', phase: 'ui', priority: 1 },
];

describe('workbench UI', () => {
	const agents: Mcp[] = [];
	const demoDir = env('BATON_TEST_DEMO_DIR');

	before(async () => {
		const baton = await api();
		// A live switch of baton.dataDir: the extension drops its connection and spawns the demo hub.
		await vscode.workspace.getConfiguration('baton').update('dataDir', demoDir, vscode.ConfigurationTarget.Workspace);
		await waitFor('the demo hub', () => baton.hub.dataDir === demoDir && baton.hub.state === 'connected', 60_000);
		assert.equal(baton.hub.cards.size, 0, 'the demo backlog starts empty');

		const [claude, codex, cursor] = await Promise.all(
			['claude-code-1', 'codex-2', 'cursor-3'].map(id => mcpAgent(id, demoDir)),
		);
		assert.ok(claude && codex && cursor);
		agents.push(claude, codex, cursor);
		await callTool(claude, 'create', { cards: plan });
		await callTool(cursor, 'claim', { cardId: 'API-3' });
		await callTool(cursor, 'complete', { cardId: 'API-3', result: 'GitHub Actions, 4 min' });
		await callTool(claude, 'claim', { cardId: 'AUTH-1' });
		await callTool(claude, 'heartbeat', { cardId: 'AUTH-1', progress: 40, note: 'middleware in place' });
		await callTool(codex, 'claim', { cardId: 'API-1' });
		await callTool(codex, 'heartbeat', { cardId: 'API-1', progress: 75, note: 'cursor-based paging done' });
		await vscode.commands.executeCommand('baton.blockCard', 'UI-1', { reason: 'waiting for the design tokens' });
		await waitFor(
			'the demo state in the cache',
			() => baton.hub.cards.get('API-1')?.progress === 75 && baton.hub.cards.get('UI-1')?.status === 'blocked',
		);

		await vscode.commands.executeCommand('notifications.clearAll');
		await vscode.commands.executeCommand('workbench.view.extension.baton');
		await vscode.commands.executeCommand('baton.board.focus');
	});

	after(async () => {
		await Promise.all(agents.map(a => a.close()));
		await vscode.workspace
			.getConfiguration('baton')
			.update('dataDir', env('BATON_TEST_DATA_DIR'), vscode.ConfigurationTarget.Workspace);
	});

	it('shows the agents’ work as tree rows, in the status bar and on the sidebar board', async () => {
		const result = await uiCheck({
			rows: ['Add rate limiting to the login API', hostile],
			boardText: 'Paginate GET /cards',
		});
		console.log(
			`UI: status bar "${result.statusBarText}", ${result.webviewFrames} board frame(s), rows ${JSON.stringify(result.rowsFound)}`,
		);
		assert.deepEqual(
			result.rowsFound,
			['Add rate limiting to the login API', hostile],
			'the hostile title is a plain-text row',
		);
		assert.equal(result.statusBarText, '3 agents');
		assert.ok(result.boardRendered, `the sidebar board shows the cards; its text: ${result.boardSample.slice(0, 300)}`);
		assert.ok(result.boardSample.includes(hostile), 'the board renders the hostile title as text');
	});

	it('keeps a group the user expanded open while events change the tree', async () => {
		const opened = await uiCheck({ rows: [], expand: ['Done — recent'], expandedState: ['Done — recent'] });
		assert.equal(opened.expanded['Done — recent'], true, 'the click expanded Done (collapsed by default)');
		const [claude] = agents;
		assert.ok(claude);
		await callTool(claude, 'heartbeat', { cardId: 'AUTH-1', progress: 55, note: 'limits configurable' });
		const baton = await api();
		await waitFor('the progress in the cache', () => baton.hub.cards.get('AUTH-1')?.progress === 55);
		const after = await uiCheck({ rows: ['Set up the CI pipeline'], expandedState: ['Done — recent'] });
		assert.equal(after.expanded['Done — recent'], true, 'still expanded after the refresh');
		assert.deepEqual(after.rowsFound, ['Set up the CI pipeline'], 'the done card is still listed under Done');
	});

	it('claims from the command palette through a quick pick that says what will happen', async () => {
		const baton = await api();
		// Keyboard focus in the workbench (the tree), not in the sidebar board's iframe, so F1 reaches it.
		await vscode.commands.executeCommand('baton.backlog.focus');
		const result = await uiCheck({ rows: [], palette: { command: 'Baton: Claim Card…', pick: hostile } });
		console.log(`quick pick item: ${result.pickedItem ?? ''}`);
		assert.match(result.pickedItem ?? '', /Claim as vscode:.*lease 300 s, renewed while this window is open/);
		assert.ok(result.pickedItem?.includes(hostile), 'the hostile title is shown as text in the quick pick');
		// card/get is answered by the hub from the store, not from the extension's cache.
		const stored = await waitFor('the palette claim in the store', async () => {
			const { card } = await baton.hub.request('card/get', { cardId: 'UI-2' });
			return card.status === 'claimed' ? card : undefined;
		});
		assert.equal(stored.claimOwner, baton.hub.me);
		await vscode.commands.executeCommand('notifications.clearAll');
	}, 60_000);

	it('opens the board in an editor tab, claims from it as the human through the relay, and saves the screenshot', async () => {
		const baton = await api();
		await vscode.commands.executeCommand('baton.board.removeView');
		await vscode.commands.executeCommand('baton.openBoardInEditor');
		await vscode.commands.executeCommand('baton.revealCard', 'AUTH-2');
		await vscode.commands.executeCommand('notifications.clearAll');
		const result = await uiCheck({
			rows: ['Password reset e-mails', 'Paginate GET /cards', 'Dark theme for the board'],
			boardText: 'Session cookie hardening',
			screenshot: env('BATON_TEST_SCREENSHOT'),
			sidebarWidth: 460,
			// The board's keyboard move to In progress = a claim, relayed by the extension as the human.
			boardKeys: { cardId: 'AUTH-3', keys: ['Control+Shift+ArrowRight'], expectColumn: 'inProgress' },
		});
		assert.equal(result.boardKeysMoved, true, 'the card moved to In progress on the board');
		const stored = await waitFor('the board claim in the store', async () => {
			const { card } = await baton.hub.request('card/get', { cardId: 'AUTH-3' });
			return card.status === 'claimed' ? card : undefined;
		});
		assert.equal(stored.claimOwner, baton.hub.me, 'the board acts as the human (vscode:<user>)');
		assert.equal(result.rowsFound.length, 3, `rows found: ${JSON.stringify(result.rowsFound)}`);
		assert.ok(result.boardRendered, 'the editor board shows the cards');
		assert.equal(result.webviewFrames, 1, 'only the editor board is visible');
		assert.ok(result.screenshot);
		assert.ok(statSync(result.screenshot).size > 50_000, 'a populated window, not a blank page');
	});
});
