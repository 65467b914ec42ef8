/**
 * The real workbench through Playwright (vscodeShim.js runs uiChecks.ts on this very page): the
 * extension switches to a clean demo backlog (a live data-dir change) in a workspace that is a small
 * web app's repository (project github.com/acme/web), three MCP agents work on it (claims with
 * scopes, progress, a question, a completion waiting for review, cards of a second project), and the
 * tree rows, the status bar items, the Explorer's held-file badge and the board webview (sidebar and
 * editor tab) must show it; the editor view is saved as docs/vscode.png.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { after, before, describe, it } from './harness';
import { api, callTool, env, mcpAgent, uiCheck, waitFor } from './helpers';

type Mcp = Awaited<ReturnType<typeof mcpAgent>>;

const web = 'github.com/acme/web';
const mobile = 'github.com/acme/mobile';
const hostile = '<img src=x onerror=alert(1)>';
const plan = [
	{
		id: 'AUTH-1',
		title: 'Add rate limiting to the login API',
		phase: 'auth',
		priority: 8,
		acceptance: ['429 after 5 failed attempts in a minute'],
		scope: ['src/auth/**'],
	},
	{ id: 'AUTH-2', title: 'Password reset e-mails', phase: 'auth', priority: 6, dependsOn: ['AUTH-1'] },
	{ id: 'AUTH-3', title: 'Session cookie hardening', phase: 'auth', priority: 5 },
	{ id: 'API-1', title: 'Paginate GET /cards', phase: 'api', priority: 7, scope: ['src/api/cards.ts'] },
	{ id: 'API-2', title: 'OpenAPI schema for v2', phase: 'api', priority: 4, dependsOn: ['API-1'] },
	{ id: 'API-3', title: 'Set up the CI pipeline', phase: 'api', priority: 9 },
	{ id: 'API-4', title: 'Audit log for admin actions', phase: 'api', priority: 6, review: 'human' },
	{ id: 'UI-1', title: 'Dark theme for the board', phase: 'ui', priority: 3 },
	{ id: 'UI-2', title: hostile, phase: 'ui', priority: 2, body: 'Card text is always rendered as text.' },
	{ id: 'UI-3', title: 'Keyboard shortcuts cheat sheet', phase: 'ui', priority: 1 },
].map(card => ({ ...card, project: web }));
/** The mobile app's cards: another project, which the web workspace's choice hides. */
const mobilePlan = [
	{ id: 'MOB-1', title: 'Push notifications for review requests', phase: 'mobile', priority: 5, project: mobile },
	{ id: 'MOB-2', title: 'Offline mode for the card list', phase: 'mobile', priority: 3, project: mobile },
];
/** The web app's files in the workspace; the agents' scopes hold some of them. */
const files: Record<string, string> = {
	'package.json': '{ "name": "acme-web", "private": true }\n',
	'README.md': '# acme web\n',
	'src/api/cards.ts': 'export const pageSize = 50;\n',
	'src/auth/login.ts': 'export const maxAttempts = 5;\n',
	'src/auth/session.ts': 'export const sameSite = "lax";\n',
	'src/board/theme.css': ':root { color-scheme: light dark; }\n',
};
const explorerView = 'workbench.explorer.fileView';

describe('workbench UI', () => {
	const agents: Mcp[] = [];
	const demoDir = env('BATON_TEST_DEMO_DIR');
	const ws = env('BATON_TEST_WORKSPACE');
	const git = (...args: string[]) =>
		execFileSync('git', ['-C', ws, ...args], { encoding: 'utf8', stdio: 'pipe' }).trim();

	before(async () => {
		const baton = await api();
		// The workspace becomes the web app's repository (committed, so git's own U badge stays off the
		// Explorer rows); its project filters the tree and the board.
		for (const [path, text] of Object.entries(files)) {
			mkdirSync(dirname(join(ws, path)), { recursive: true });
			writeFileSync(join(ws, path), text);
		}
		git('init', '-q', '-b', 'main');
		try {
			git('remote', 'remove', 'origin');
		} catch {
			// No origin yet.
		}
		git('remote', 'add', 'origin', 'git@github.com:acme/web.git');
		git('add', ...Object.keys(files));
		git('-c', 'user.email=dev@acme.test', '-c', 'user.name=Dev', 'commit', '-qm', 'acme web');
		await vscode.commands.executeCommand('baton.showWorkspaceProjects');
		assert.deepEqual(baton.projects.filter, [web]);

		// A live switch of baton.dataDir: the extension drops its connection and spawns the demo hub.
		await vscode.workspace.getConfiguration('baton').update('dataDir', demoDir, vscode.ConfigurationTarget.Workspace);
		await waitFor('the demo hub', () => baton.hub.dataDir === demoDir && baton.hub.state === 'connected', 60_000);
		assert.equal(baton.hub.cards.size, 0, 'the demo backlog starts empty');

		const [claude, codex, cursor] = await Promise.all(
			['claude-code-1', 'codex-2', 'cursor-3'].map(id => mcpAgent(id, demoDir, { BATON_PROJECT: web })),
		);
		assert.ok(claude && codex && cursor);
		agents.push(claude, codex, cursor);
		await callTool(claude, 'create', { cards: [...plan, ...mobilePlan] });
		await callTool(cursor, 'claim', { cardId: 'API-3' });
		await callTool(cursor, 'complete', { cardId: 'API-3', result: 'GitHub Actions, 4 min' });
		await callTool(cursor, 'claim', { cardId: 'API-4' });
		await callTool(cursor, 'complete', { cardId: 'API-4', result: 'Admin actions write to `audit_log`.' });
		await callTool(claude, 'claim', { cardId: 'AUTH-1' });
		await callTool(claude, 'heartbeat', { cardId: 'AUTH-1', progress: 40, note: 'middleware in place' });
		await callTool(codex, 'claim', { cardId: 'API-1' });
		await callTool(codex, 'heartbeat', { cardId: 'API-1', progress: 75, note: 'cursor-based paging done' });
		await callTool(codex, 'comment', {
			cardId: 'API-1',
			text: 'Keep the offset parameter for old clients, or drop it in v2?',
			question: true,
		});
		await vscode.commands.executeCommand('baton.blockCard', 'UI-1', { reason: 'waiting for the design tokens' });
		await waitFor(
			'the demo state in the cache',
			() =>
				baton.hub.cards.get('API-1')?.progress === 75 &&
				baton.hub.cards.get('API-1')?.needsInput === true &&
				baton.hub.cards.get('API-4')?.status === 'review' &&
				baton.hub.cards.get('UI-1')?.status === 'blocked',
		);

		await vscode.commands.executeCommand('notifications.clearAll');
		await vscode.commands.executeCommand('workbench.view.extension.baton');
		await vscode.commands.executeCommand('baton.board.focus');
	});

	after(async () => {
		await Promise.all(agents.map(a => a.close()));
		await vscode.commands.executeCommand('vscode.moveViews', {
			viewIds: [explorerView],
			destinationId: 'workbench.view.explorer',
		});
		await vscode.workspace
			.getConfiguration('baton')
			.update('dataDir', env('BATON_TEST_DATA_DIR'), vscode.ConfigurationTarget.Workspace);
		git('remote', 'remove', 'origin');
		await (await api()).projects.refresh();
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
		// The Explorer's folders under the Backlog, so one window shows the held files beside the cards.
		await vscode.commands.executeCommand('vscode.moveViews', {
			viewIds: [explorerView],
			destinationId: 'workbench.view.extension.baton',
		});
		await vscode.commands.executeCommand('revealInExplorer', vscode.Uri.file(join(ws, 'src/api/cards.ts')));
		await vscode.commands.executeCommand('revealInExplorer', vscode.Uri.file(join(ws, 'src/auth/login.ts')));
		await vscode.commands.executeCommand('baton.openBoardInEditor');
		await vscode.commands.executeCommand('baton.revealCard', 'AUTH-2');
		await vscode.commands.executeCommand('notifications.clearAll');
		// The layout first, so the scrollbars it showed have faded by the screenshot.
		await uiCheck({ rows: [], sidebarWidth: 460, paneHeights: { backlog: 420, 'acme-web': 262 } });
		const result = await uiCheck({
			rows: [
				'Password reset e-mails',
				'Paginate GET /cards',
				'Dark theme for the board',
				'Audit log for admin actions',
			],
			boardText: 'Session cookie hardening',
			screenshot: env('BATON_TEST_SCREENSHOT'),
			// The board's keyboard move to In progress = a claim, relayed by the extension as the human.
			boardKeys: { cardId: 'AUTH-3', keys: ['Control+Shift+ArrowRight'], expectColumn: 'inProgress' },
			explorerFile: 'login.ts',
			statusBarItem: '1 to review',
		});
		assert.equal(result.boardKeysMoved, true, 'the card moved to In progress on the board');
		const stored = await waitFor('the board claim in the store', async () => {
			const { card } = await baton.hub.request('card/get', { cardId: 'AUTH-3' });
			return card.status === 'claimed' ? card : undefined;
		});
		assert.equal(stored.claimOwner, baton.hub.me, 'the board acts as the human (vscode:<user>)');
		assert.equal(result.rowsFound.length, 4, `rows found: ${JSON.stringify(result.rowsFound)}`);
		assert.ok(result.boardRendered, 'the editor board shows the cards');
		assert.ok(result.boardSample.includes('Audit log for admin actions'), 'the card in review is on the board');
		assert.equal(
			result.boardSample.includes('Push notifications for review requests'),
			false,
			'the workspace’s project choice hides the mobile app’s cards',
		);
		assert.ok(
			result.statusBarItems.some(t => t.includes('1 to review')),
			`a status bar item says "1 to review": ${JSON.stringify(result.statusBarItems)}`,
		);
		assert.ok(
			result.explorerFile?.badge.includes('●'),
			`login.ts is decorated as held: ${JSON.stringify(result.explorerFile)}`,
		);
		assert.deepEqual(result.notifications, [], 'no notification covers the window');
		assert.equal(result.webviewFrames, 1, 'only the editor board is visible');
		assert.ok(result.screenshot);
		assert.ok(statSync(result.screenshot).size > 50_000, 'a populated window, not a blank page');
	});
});
