/**
 * Projects and scopes in a real VS Code: the workspace's project (its git remote) filters the Backlog tree, with
 * the All projects switch, as the user sees the rows; and a real MCP agent's claim (the SDK client over
 * stdio) decorates the file in its scope in the Explorer (the badge drawn, the exact tooltip), editing
 * that file warns once, and the agent's complete removes the decoration, each within 1 s of the
 * agent's call. The workspace becomes a git repository with an origin for this file only; its remote
 * is removed afterwards so later cases see no project filter of theirs.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { RpcClient } from '../../../core/protocol/rpc';
import { after, before, describe, it } from './harness';
import { agentClient, api, callTool, env, mcpAgent, uiCheck, uniqueId, waitFor } from './helpers';

type Mcp = Awaited<ReturnType<typeof mcpAgent>>;

describe('projects and scopes in the editor', () => {
	const ws = env('BATON_TEST_WORKSPACE');
	const slug = `web-${Date.now().toString(36)}`;
	const project = `github.com/acme/${slug}`;
	const git = (...args: string[]) =>
		execFileSync('git', ['-C', ws, ...args], { encoding: 'utf8', stdio: 'pipe' }).trim();
	const file = vscode.Uri.file(join(ws, 'src', 'auth', 'session.ts'));
	let observer: RpcClient | undefined;
	let agent: Mcp | undefined;

	before(async () => {
		const baton = await api();
		await waitFor('the hub connection', () => baton.hub.state === 'connected', 60_000);
		observer = await agentClient(uniqueId('observer'));
		git('init', '-q', '-b', 'main');
		try {
			git('remote', 'remove', 'origin');
		} catch {
			// No origin yet.
		}
		git('remote', 'add', 'origin', `git@github.com:acme/${slug}.git`);
		mkdirSync(join(ws, 'src', 'auth'), { recursive: true });
		writeFileSync(file.fsPath, 'export const sameSite = "lax";\n');
		// Committed, so the git extension's own badge (U for untracked) does not share the row.
		git('add', 'src/auth/session.ts');
		git('-c', 'user.email=test@example.com', '-c', 'user.name=Test', 'commit', '-qm', 'session');
		// The switch back to the workspace's projects asks git again: the folder has just become a repository.
		await vscode.commands.executeCommand('baton.showWorkspaceProjects');
		assert.deepEqual(baton.projects.filter, [project]);
	});

	after(async () => {
		observer?.close();
		await agent?.close();
		await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
		git('remote', 'remove', 'origin');
		await (await api()).projects.refresh();
		await vscode.commands.executeCommand('notifications.clearAll');
	});

	it('the Backlog shows the workspace project’s cards and those without one; All projects shows the rest', async () => {
		assert.ok(observer);
		const { backlog } = await api();
		const mine = uniqueId('WEB');
		const other = uniqueId('OTH');
		const loose = uniqueId('ANY');
		const titles = {
			mine: `Harden the session cookie ${slug} ${mine}`,
			other: `Tune the mobile build ${slug} ${other}`,
			loose: `Update the licence year ${slug} ${loose}`,
		};
		await observer.request('card/create', {
			cards: [
				// First in Ready, so the board renders them among the cards earlier cases left.
				{ id: mine, title: titles.mine, project, priority: 1000 },
				{ id: other, title: titles.other, project: `github.com/acme/mobile-${slug}`, priority: 1000 },
				{ id: loose, title: titles.loose, priority: 1000 },
			],
		});
		const ready = () => backlog.cardsIn('ready').map(c => c.id);
		await waitFor('the workspace’s cards in the tree', () => ready().includes(mine) && ready().includes(loose));
		assert.equal(ready().includes(other), false, 'another project’s card is hidden');
		assert.match(backlog.describeFilter(), new RegExp(project.replace(/\./g, '\\.')));

		// Only this case's cards in view (earlier cases left many), so every row asked for is rendered.
		await vscode.commands.executeCommand('baton.filterBacklog', { text: slug });
		await vscode.commands.executeCommand('workbench.view.extension.baton');
		const seen = await uiCheck({ rows: [titles.mine, titles.loose, titles.other] });
		assert.deepEqual(seen.rowsFound, [titles.mine, titles.loose], 'as the user sees the rows');

		// The sidebar board follows the same switch (the extension tells it with view/projects).
		await vscode.commands.executeCommand('baton.board.focus');
		const board = await uiCheck({ rows: [], boardText: titles.mine });
		assert.ok(board.boardRendered, 'the board shows the workspace project’s card');
		assert.equal(board.boardSample.includes(titles.other), false, 'the board hides the other project’s card');

		await vscode.commands.executeCommand('baton.showAllProjects');
		await waitFor('every project’s cards', () => ready().includes(other));
		const all = await uiCheck({ rows: [titles.other], boardText: titles.other });
		assert.deepEqual(all.rowsFound, [titles.other]);
		assert.ok(all.boardRendered, 'All projects: the board shows the other project’s card too');
		await vscode.commands.executeCommand('baton.showWorkspaceProjects');
		await waitFor('the filter back', () => !ready().includes(other));
		await vscode.commands.executeCommand('baton.clearFilter');
	}, 90_000);

	it('an MCP agent’s claim decorates the file in the Explorer, editing it warns, and its complete removes it', async () => {
		assert.ok(observer);
		const baton = await api();
		const id = uniqueId('AUTH');
		const agentId = uniqueId('claude-code');
		const title = `Session cookie hardening ${id}`;
		await observer.request('card/create', { cards: [{ id, title, project, scope: ['src/auth/**'] }] });
		agent = await mcpAgent(agentId, undefined, { BATON_PROJECT: project });
		await vscode.commands.executeCommand('revealInExplorer', file);
		const tooltip = () => baton.heldFiles.provideFileDecoration(file)?.tooltip;
		assert.equal(tooltip(), undefined, 'nothing holds it before the claim');

		await callTool(agent, 'claim', { cardId: id });
		const claimedAt = Date.now();
		await waitFor('the decoration after the claim', () => tooltip() !== undefined, 5_000);
		const claimMs = Date.now() - claimedAt;
		console.log(`decoration ${claimMs} ms after the agent's claim returned`);
		assert.equal(tooltip(), `Held by ${agentId} for ${id} — ${title}`);
		assert.ok(claimMs <= 1000, `decorated ${claimMs} ms after the claim (≤ 1 s)`);
		// The workbench asks for the decoration after the change event: poll what the Explorer draws.
		const badge = async () => (await uiCheck({ rows: [], explorerFile: 'session.ts' })).explorerFile?.badge ?? '';
		await waitFor('the badge in the Explorer', async () => (await badge()).includes('●'));

		// Starting to edit the held file warns once, naming the holder and the card.
		const editor = await vscode.window.showTextDocument(file);
		await editor.edit(e => e.insert(new vscode.Position(0, 0), '// ')); // no save: reverted in after()
		const warned = await waitFor('the edit warning', async () => {
			const ui = await uiCheck({ rows: [] });
			return ui.notifications.find(n => n.includes(`is held by ${agentId} for ${id}`));
		});
		assert.match(warned, /src\/auth\/session\.ts is held by .* Session cookie hardening/);
		assert.match(warned, /Open Card/);
		assert.match(warned, /Message Agent/);
		await vscode.commands.executeCommand('notifications.clearAll');

		await callTool(agent, 'complete', { cardId: id, result: 'SameSite=Strict everywhere.' });
		const completedAt = Date.now();
		await waitFor('no decoration after the complete', () => tooltip() === undefined, 5_000);
		const completeMs = Date.now() - completedAt;
		console.log(`decoration gone ${completeMs} ms after the agent's complete returned`);
		assert.ok(completeMs <= 1000, `removed ${completeMs} ms after the complete (≤ 1 s)`);
		await vscode.commands.executeCommand('revealInExplorer', file);
		await waitFor('no badge in the Explorer', async () => !(await badge()).includes('●'));
	});
});
