/**
 * The review desk in a real VS Code, with real MCP agents (the SDK client over stdio)
 * and the real workbench (Playwright in the shim drives the command palette, its quick picks and
 * input boxes): an agent's completion waits In review in the tree and the status bar, the human
 * approves from the palette and a second agent can claim the dependent; Request Changes hands the
 * note to the next attempt; Message Agent and Reply to Agent post messages; Open Changes shows a
 * commit's and a branch's diff through the git extension. State is asked of the hub over a separate
 * connection, never taken from the extension's cache.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { Card, Result } from '../../../core/protocol';
import type { RpcClient } from '../../../core/protocol/rpc';
import type { CardNode } from '../../../extension/backlogNodes';
import type { OpenedChanges } from '../../../extension/gitChanges';
import { after, before, describe, it } from './harness';
import { agentClient, api, callTool, env, mcpAgent, storeCard, uiCheck, uniqueId, waitFor } from './helpers';

type Mcp = Awaited<ReturnType<typeof mcpAgent>>;

async function reviewRows(): Promise<{ node: CardNode; item: vscode.TreeItem }[]> {
	const { backlog } = await api();
	const group = backlog.getChildren().find(g => g.kind === 'group' && g.key === 'review');
	return group === undefined
		? []
		: backlog
				.getChildren(group)
				.filter((n): n is CardNode => n.kind === 'card')
				.map(node => ({ node, item: backlog.getTreeItem(node) }));
}

/** Keyboard focus in the workbench (the Backlog tree), so F1 reaches the palette. */
async function focusWorkbench(): Promise<void> {
	await vscode.commands.executeCommand('notifications.clearAll');
	await vscode.commands.executeCommand('workbench.view.extension.baton');
	await vscode.commands.executeCommand('baton.backlog.focus');
}

describe('review desk', () => {
	let observer: RpcClient | undefined;
	let worker: Mcp | undefined;
	let second: Mcp | undefined;
	const workerId = uniqueId('claude');
	const secondId = uniqueId('codex');

	/** Creates a card with review, and has the worker claim and complete it: it waits in review. */
	async function completedForReview(title: string, result: string, extra: object = {}): Promise<string> {
		assert.ok(observer && worker);
		const id = uniqueId('rev');
		await observer.request('card/create', { cards: [{ id, title, review: 'human', ...extra }] });
		await callTool(worker, 'claim', { cardId: id });
		await callTool(worker, 'complete', { cardId: id, result });
		assert.equal((await storeCard(observer, id)).status, 'review', 'the completion waits for review');
		return id;
	}

	before(async () => {
		const baton = await api();
		await waitFor('the hub connection', () => baton.hub.state === 'connected', 60_000);
		observer = await agentClient(uniqueId('observer'));
		[worker, second] = await Promise.all([mcpAgent(workerId), mcpAgent(secondId)]);
	});

	after(async () => {
		observer?.close();
		await Promise.all([worker?.close(), second?.close()]);
		await vscode.commands.executeCommand('notifications.clearAll');
	});

	it('an MCP agent completes a review card → In review in the tree → approved from the palette → a second MCP agent claims the dependent', async () => {
		assert.ok(observer && worker && second);
		const baton = await api();
		const phase = uniqueId('gate');
		const a = uniqueId('A');
		const b = uniqueId('B');
		const titleA = `Rate limit the login API ${a}`;
		await observer.request('card/create', {
			cards: [
				{ id: a, title: titleA, phase, review: 'human' },
				{ id: b, title: `Password reset e-mails ${b}`, phase, dependsOn: [a] },
			],
		});
		await callTool(worker, 'claim', { cardId: a });
		await callTool(worker, 'complete', { cardId: a, result: 'Limits in place, 429 after 5 tries.' });
		assert.equal((await storeCard(observer, a)).status, 'review');

		const row = await waitFor('A under In review in the tree', async () =>
			(await reviewRows()).find(r => r.node.card.id === a),
		);
		assert.equal(row.item.contextValue, 'card.review', 'the review menus apply to it');
		assert.match(String(row.item.description), new RegExp(`by ${workerId}`));
		const bar = await waitFor('the review count in the status bar', () => baton.reviewBar.summary);
		assert.equal(bar.text, '1 to review');
		assert.match(bar.tooltip, new RegExp(`${a} — ${titleA}`));
		const early = await callTool<{ card: Card | null }>(second, 'claim', { phase });
		assert.equal(early.card, null, 'B waits while A is in review');

		await focusWorkbench();
		// Brought into view as a user's click on the review notice does: in the newest VS Code the tree
		// holds every earlier group's cards by now, and A's row may sit below the view's fold.
		await vscode.commands.executeCommand('baton.revealCard', a);
		const seen = await uiCheck({ rows: ['In review', titleA], statusBarItem: '1 to review' });
		assert.deepEqual(seen.rowsFound, ['In review', titleA], 'the workbench shows A under In review');
		assert.ok(
			seen.statusBarItems.some(t => t.includes('1 to review')),
			`a status bar item says "1 to review": ${JSON.stringify(seen.statusBarItems)}`,
		);
		const approved = await uiCheck({ rows: [], palette: { command: 'Baton: Approve Card…', pick: titleA } });
		assert.match(approved.pickedItem ?? '', new RegExp(`Approve: done; ${b} can start`));
		await waitFor('A done in the store', async () => (await storeCard(observer!, a)).status === 'done');

		const claimed = await callTool<{ card: Card | null }>(second, 'claim', { phase });
		assert.equal(claimed.card?.id, b, 'the second agent gets the dependent');
		await waitFor('the status bar without reviews', () => baton.reviewBar.summary === undefined);
	}, 90_000);

	it('Request Changes from the palette sends the card back with the note as its hand-over', async () => {
		assert.ok(observer && worker);
		const title = `Paginate GET /cards ${uniqueId('t')}`;
		const id = await completedForReview(title, 'Offset paging.');
		await waitFor('the card in the cache', async () => (await api()).hub.cards.get(id)?.status === 'review');
		await focusWorkbench();
		const note = 'Use cursor-based paging, not offsets';
		const r = await uiCheck({
			rows: [],
			palette: {
				command: 'Baton: Request Changes…',
				pick: title,
				input: { prompt: `What should change on ${id}`, text: note },
			},
		});
		assert.match(r.pickedItem ?? '', /Back to Ready with your note \(attempt 1 of \d+\)/);
		const stored = await waitFor('the card back in Ready', async () => {
			const c = await storeCard(observer!, id);
			return c.status === 'ready' ? c : undefined;
		});
		assert.equal(stored.handoff, note);
		const nextAgent = await agentClient(uniqueId('next'));
		try {
			const next = await nextAgent.request('card/claim', { cardId: id });
			assert.equal(next.handoff, note, 'the next claim starts from the note');
		} finally {
			nextAgent.close();
		}
	}, 60_000);

	it('Review Next Card shows the longest-waiting card’s detail and acts on it', async () => {
		assert.ok(observer);
		const baton = await api();
		const older = await completedForReview(`Older ${uniqueId('t')}`, 'First **result**');
		const newer = await completedForReview(`Newer ${uniqueId('t')}`, 'Second result');
		await waitFor('both in the cache', () => baton.hub.cards.get(newer)?.status === 'review');
		const r = await vscode.commands.executeCommand<Result<'card/review'>>('baton.reviewNextCard', {
			action: 'approve',
		});
		assert.equal(r.card.id, older, 'the oldest first');
		assert.equal((await storeCard(observer, older)).status, 'done');
		const detail = await vscode.workspace.openTextDocument(vscode.Uri.parse(`baton-card:/${older}.md`));
		assert.match(detail.getText(), /## Result\n\nFirst \*\*result\*\*/, 'the detail shows the result as markdown');
		await waitFor('the detail in an editor tab', () =>
			vscode.window.tabGroups.all.some(g => g.tabs.some(t => t.label.includes(older))),
		);
		await vscode.commands.executeCommand('baton.reviewNextCard', { action: 'requestChanges', note: 'Add tests' });
		assert.equal((await storeCard(observer, newer)).handoff, 'Add tests');
		await vscode.commands.executeCommand('workbench.action.closeAllEditors');
	});

	it('refuses Request Changes without a note, and approving the human’s own completion', async () => {
		assert.ok(observer);
		const baton = await api();
		const id = await completedForReview(`Blank note ${uniqueId('t')}`, 'done');
		await waitFor('the card in the cache', () => baton.hub.cards.get(id)?.status === 'review');
		const refused = await vscode.commands.executeCommand('baton.requestChanges', id, { note: '  ' });
		assert.equal(refused, undefined, 'a blank note is refused');
		assert.equal((await storeCard(observer, id)).status, 'review', 'and nothing changed');
		const r = await vscode.commands.executeCommand<Result<'card/review'>>('baton.approveCard', id);
		assert.equal(r.card.status, 'done');

		const own = uniqueId('own');
		await observer.request('card/create', { cards: [{ id: own, title: 'Mine to finish', review: 'human' }] });
		await vscode.commands.executeCommand('baton.claimCard', own);
		await vscode.commands.executeCommand('baton.completeCard', own, { result: 'did it myself' });
		await waitFor('my completion in review', () => baton.hub.cards.get(own)?.status === 'review');
		assert.equal(
			(await reviewRows()).find(row => row.node.card.id === own)?.item.contextValue,
			'card.review.own',
			'no Approve menu on my own work',
		);
		assert.equal(await vscode.commands.executeCommand('baton.approveCard', own), undefined, 'the hub refuses');
		assert.equal((await storeCard(observer, own)).status, 'review');
		await observer.request('card/review', { cardId: own, approve: true });
	});

	it('Message Agent… from the palette posts a message on a card an agent holds', async () => {
		assert.ok(observer && worker);
		const id = uniqueId('msg');
		const title = `Wire the login form ${id}`;
		await observer.request('card/create', { cards: [{ id, title }] });
		await callTool(worker, 'claim', { cardId: id });
		await waitFor('the claim in the cache', async () => (await api()).hub.cards.get(id)?.status === 'claimed');
		await focusWorkbench();
		const text = 'Stop, use the v2 API';
		const r = await uiCheck({
			rows: [],
			palette: { command: 'Baton: Message Agent…', pick: title, input: { prompt: `Message to ${workerId}`, text } },
		});
		assert.match(r.pickedItem ?? '', new RegExp(`Message ${workerId}: it gets it with its next tool call`));
		const baton = await api();
		const message = await waitFor('the message in the store', async () =>
			(await observer!.request('card/get', { cardId: id })).messages.find(m => m.text === text),
		);
		assert.equal(message.from, baton.hub.me);
		await callTool(worker, 'release', { cardId: id });
	}, 60_000);

	it('an agent’s question flags the card, is announced, and Reply to Agent answers it', async () => {
		assert.ok(observer && worker);
		const baton = await api();
		const id = uniqueId('ask');
		await observer.request('card/create', { cards: [{ id, title: `Choose the API ${id}` }] });
		await callTool(worker, 'claim', { cardId: id });
		await callTool(worker, 'comment', { cardId: id, text: 'v1 or v2 API?', question: true });
		const node = await waitFor('the needs-input marker', () => baton.backlog.nodeFor(id));
		await waitFor('the marker', () => baton.hub.cards.get(id)?.needsInput === true);
		const item = baton.backlog.getTreeItem(baton.backlog.nodeFor(id) ?? node);
		assert.match(String(item.description), /needs input/);
		assert.equal(item.contextValue, 'card.claimed.other.needsInput');
		assert.equal((await waitFor('the question count', () => baton.reviewBar.summary)).text, '1 question');
		await waitFor('the notification', () =>
			baton.desk.shown.find(t => t === `${workerId} asks on ${id}: v1 or v2 API?`),
		);

		await vscode.commands.executeCommand('baton.replyToAgent', id, { text: 'v2, please' });
		const got = await observer.request('card/get', { cardId: id });
		assert.equal(got.card.needsInput, false, 'answered');
		assert.deepEqual(
			got.messages.map(m => [m.from, m.text]),
			[
				[workerId, 'v1 or v2 API?'],
				[baton.hub.me, 'v2, please'],
			],
		);
		await waitFor('the status bar without questions', () => baton.reviewBar.summary === undefined);
		await callTool(worker, 'release', { cardId: id });
	});

	it('Open Changes shows a commit’s and a branch’s files through the git extension, and says why it cannot', async () => {
		const ws = env('BATON_TEST_WORKSPACE');
		const git = (...args: string[]) => execFileSync('git', ['-C', ws, ...args], { encoding: 'utf8' }).trim();
		git('init', '-q', '-b', 'main');
		git('config', 'user.email', 'test@example.com');
		git('config', 'user.name', 'Test');
		writeFileSync(join(ws, 'login.ts'), 'export const limit = 5;\n');
		git('add', 'login.ts');
		git('commit', '-qm', 'base');
		writeFileSync(join(ws, 'login.ts'), 'export const limit = 10;\n');
		writeFileSync(join(ws, 'rate.ts'), 'export const window = 60;\n');
		git('add', 'login.ts', 'rate.ts');
		git('commit', '-qm', 'raise the limit');
		const sha = git('rev-parse', 'HEAD');
		git('checkout', '-q', '-b', 'feature/reset');
		writeFileSync(join(ws, 'reset.ts'), 'export const ttl = 3600;\n');
		git('add', 'reset.ts');
		git('commit', '-qm', 'reset e-mails');
		git('checkout', '-q', 'main');

		const byCommit = await completedForReview('Commit result', `Raised the limit.\ncommit: ${sha}`);
		const opened = await vscode.commands.executeCommand<OpenedChanges>('baton.openChanges', byCommit);
		assert.deepEqual([...opened.files].sort(), ['login.ts', 'rate.ts']);
		await waitFor('the changes editor', () =>
			vscode.window.tabGroups.activeTabGroup.activeTab?.label.includes(byCommit),
		);
		const byBranch = await completedForReview('Branch result', 'Pushed.\nbranch: feature/reset');
		const branch = await vscode.commands.executeCommand<OpenedChanges>('baton.openChanges', byBranch);
		assert.deepEqual(branch.files, ['reset.ts']);

		const unknown = await completedForReview('Unknown commit', 'commit: 0123456789abcdef0123');
		assert.equal(await vscode.commands.executeCommand('baton.openChanges', unknown), undefined, 'a clear error');
		const none = await completedForReview('No commit', 'Nothing to point at');
		assert.equal(await vscode.commands.executeCommand('baton.openChanges', none), undefined);
		await vscode.commands.executeCommand('workbench.action.closeAllEditors');
		for (const id of [byCommit, byBranch, unknown, none]) {
			await vscode.commands.executeCommand('baton.approveCard', id);
		}
	}, 60_000);
});
