/**
 * Reviewing a card's workspace in a real VS Code: a card in review whose workspace is a
 * real worktree and branch (ensureWorktree) of a fresh repository outside the VS Code workspace, the
 * agent's work committed there. Review Next Card opens the branch's diff in the multi-file diff
 * editor without anyone naming a ref, and both sides are the commits the hub compared (read through
 * the extension's `baton-git:` documents). Approving it from VS Code (Approve Card) then lands the
 * branch into main, in git and in the repository's checkout, and the card is done with
 * `workspace.landed`. A card of a project whose check takes two seconds shows "Landing now" in its tree
 * row and In review's row while its approval lands, and neither once it is done. The card gets its workspace through `data/import` of the card as the claim would
 * leave it (the hub's store is the extension's PGlite).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import type { Card, CardWorkspace, Result } from '../../../core/protocol';
import type { RpcClient } from '../../../core/protocol/rpc';
import { type OpenedWorkspaceChanges, gitShowUri } from '../../../extension/workspaceChanges';
import { toReview } from '../../../extension/reviewQueue';
import { ensureWorktree } from '../../../mcp-server/workspaces/worktree';
import { after, before, describe, it } from './harness';
import { agentClient, api, uniqueId, waitFor } from './helpers';

const identity = ['-c', 'user.name=Test', '-c', 'user.email=test@example.com'];
const gitIn = (dir: string, ...args: string[]) =>
	execFileSync('git', ['-C', dir, ...identity, ...args], { encoding: 'utf8' }).trim();

function writeAll(dir: string, files: Record<string, string>): void {
	for (const [rel, text] of Object.entries(files)) {
		mkdirSync(dirname(join(dir, rel)), { recursive: true });
		writeFileSync(join(dir, rel), text);
	}
}

/** Every card of the backlog, page by page, as an export reads them. */
async function exported(observer: RpcClient, id: string): Promise<Card> {
	let cursor: string | undefined;
	do {
		const page = await observer.request('data/export', cursor === undefined ? {} : { cursor });
		const card = page.cards.find(c => c.id === id);
		if (card) {
			return card;
		}
		cursor = page.nextCursor;
	} while (cursor !== undefined);
	throw new Error(`${id} is not in the export`);
}

describe('workspace review', () => {
	let observer: RpcClient | undefined;
	let repo = '';

	before(async () => {
		const baton = await api();
		await waitFor('the hub connection', () => baton.hub.state === 'connected', 60_000);
		observer = await agentClient(uniqueId('observer'));
		repo = join(mkdtempSync('/tmp/bt-wsr-'), 'repo');
		mkdirSync(repo);
		gitIn(repo, 'init', '-q', '-b', 'main');
		writeAll(repo, { 'src/login.ts': 'export const limit = 5;\n', 'README.md': '# demo\n' });
		gitIn(repo, 'add', '-A');
		gitIn(repo, 'commit', '-qm', 'base');
	});

	after(async () => {
		observer?.close();
		await vscode.commands.executeCommand('workbench.action.closeAllEditors');
		rmSync(dirname(repo), { recursive: true, force: true });
	});

	/**
	 * A card in review, completed by an agent, whose branch changes login.ts and adds rate.ts (with a
	 * `project`: adds a file of its own).
	 */
	async function cardInReview(project?: string): Promise<{ id: string; workspace: CardWorkspace }> {
		assert.ok(observer);
		const id = uniqueId('WS');
		const ws = await ensureWorktree({ repo, cardId: id });
		writeAll(
			ws.path,
			project === undefined
				? { 'src/login.ts': 'export const limit = 10;\n', 'src/rate.ts': 'export const window = 60;\n' }
				: { [`src/${id}.ts`]: 'export const more = 1;\n' },
		);
		gitIn(ws.path, 'add', '-A');
		gitIn(ws.path, 'commit', '-qm', `${id}: Raise the login limit`);
		const workspace: CardWorkspace = {
			root: repo,
			path: ws.path,
			branch: ws.branch,
			base: ws.base,
			host: hostname(),
			head: gitIn(repo, 'rev-parse', ws.branch),
		};
		// A card as a claim and a complete in a workspaces project leave it: In review, with its workspace.
		const template = `${id}-template`;
		await observer.request('card/create', {
			cards: [{ id: template, title: 'Raise the login limit', review: 'human', ...(project ? { project } : {}) }],
		});
		const card = await exported(observer, template);
		await observer.request('card/delete', { cardId: template });
		await observer.request('data/import', {
			cards: [
				{
					...card,
					id,
					status: 'review',
					completedBy: 'claude-ws',
					result: 'Raised the limit.',
					attempts: 1,
					workspace,
				},
			],
		});
		return { id, workspace };
	}

	it('Review Next Card opens the diff of the agent’s branch in the multi-file diff editor', async () => {
		assert.ok(observer);
		const baton = await api();
		const { id, workspace } = await cardInReview();
		await waitFor('the card with its workspace', () => baton.hub.cards.get(id)?.workspace?.branch === workspace.branch);
		// Leftovers of other groups in review would come first: approve them.
		for (const c of toReview(baton.hub.cards.values(), baton.hub.me).filter(c => c.id !== id)) {
			await observer.request('card/review', { cardId: c.id, approve: true, version: c.version });
		}
		await waitFor(
			'the card first in the review queue',
			() => toReview(baton.hub.cards.values(), baton.hub.me)[0]?.id === id,
		);

		const opened = await vscode.commands.executeCommand<OpenedWorkspaceChanges>('baton.reviewNextCard', {
			action: 'openChanges',
		});
		assert.ok(opened, 'Review Next Card returned what it opened');
		assert.deepEqual(opened.files, ['src/login.ts', 'src/rate.ts']);
		assert.equal(opened.head, workspace.head);
		assert.equal(opened.mergeBase, gitIn(repo, 'rev-parse', 'main'));
		const tab = await waitFor('the changes editor', () => {
			const t = vscode.window.tabGroups.activeTabGroup.activeTab;
			return t?.label.includes(`${id}: ${workspace.branch} → main`) === true ? t : undefined;
		});
		assert.ok(!(tab.input instanceof vscode.TabInputTextDiff), 'one multi-file editor, not a diff per file');
		assert.ok((await vscode.commands.getCommands(true)).includes('vscode.changes'), 'vscode.changes exists');

		// Its two sides, as the editor reads them: the base's file and the branch's.
		const side = async (ref: string, file: string) =>
			(await vscode.workspace.openTextDocument(gitShowUri(repo, ref, file, join(workspace.path, file)))).getText();
		assert.equal(await side(opened.mergeBase, 'src/login.ts'), 'export const limit = 5;\n');
		assert.equal(await side(opened.head, 'src/login.ts'), 'export const limit = 10;\n');
		assert.equal(await side(opened.head, 'src/rate.ts'), 'export const window = 60;\n');

		// Approving it from VS Code lands the branch into main (squash: a card without a project lands
		// the default way), in the repository's own checkout too (on main and clean), and records it.
		const approved = await vscode.commands.executeCommand<Result<'card/review'>>('baton.approveCard', id);
		assert.ok(approved, 'the approval went through');
		assert.equal(approved.card.status, 'done');
		const landed = approved.card.workspace?.landed;
		assert.equal(landed?.mode, 'squash');
		assert.equal(landed.commit, gitIn(repo, 'rev-parse', 'main'));
		assert.equal(gitIn(repo, 'show', 'main:src/login.ts'), 'export const limit = 10;');
		assert.equal(gitIn(repo, 'show', 'main:src/rate.ts'), 'export const window = 60;');
		assert.equal(gitIn(repo, 'log', '-1', '--format=%s', 'main'), `${id}: Raise the login limit`);
		assert.equal(readFileSync(join(repo, 'src/login.ts'), 'utf8'), 'export const limit = 10;\n');
		assert.equal(gitIn(repo, 'status', '--porcelain'), '', 'the checkout of main is updated, nothing left over');
		assert.equal(gitIn(repo, 'branch', '--list', workspace.branch), '', 'the landed branch is deleted');
		const stored = (await observer.request('card/get', { cardId: id })).card;
		assert.equal(stored.status, 'done');
		assert.deepEqual(stored.workspace?.landed, landed);
		await waitFor('the landed card in the extension', () => baton.hub.cards.get(id)?.workspace?.landed !== undefined);
	}, 60_000);

	it('shows "Landing now" on the tree row and In review while the approval lands', async () => {
		assert.ok(observer);
		const baton = await api();
		// The project's check runs again on the merged tree (the card has no check of its own): 2 s.
		const project = uniqueId('landing-proj');
		await observer.request('project/settings/update', { project, check: 'sleep 2' });
		const { id } = await cardInReview(project);
		await waitFor('the card in the tree', () => baton.backlog.nodeFor(id));
		const approval = observer.request('card/review', { cardId: id, approve: true });
		const row = () => {
			const node = baton.backlog.nodeFor(id);
			return node === undefined ? '' : String(baton.backlog.getTreeItem(node).description);
		};
		await waitFor('Landing now on the row', () => row().includes('Landing now'), 10_000);
		const review = baton.backlog.getChildren().find(n => n.kind === 'group' && n.key === 'review');
		assert.ok(review);
		assert.match(String(baton.backlog.getTreeItem(review).description), /· 1 landing/);
		assert.equal((await approval).card.status, 'done');
		await waitFor('the words gone once it landed', () => baton.hub.landing.size === 0);
		assert.doesNotMatch(row(), /Landing now|Waiting to land/);
	}, 60_000);
});
