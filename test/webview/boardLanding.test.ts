/**
 * The landing queue on the board, in real headless Chromium against a real hub on a real git
 * repository: three cards of one project pass their own check and a person approves all three at once,
 * after main moved under them, so each landing's check runs again on the merged tree and takes two
 * seconds (the project's check sleeps on a tree with main's change). While they take turns the board
 * shows "Landing now" on one card, "Waiting to land · 2nd" and "· 3rd" on the others, "1 landing ·
 * 2 waiting" in In review's head, and the detail pane of a waiting card its place and who approved it.
 * Two land (Done, their words gone); the third's merged tree fails the check, and it is back in Ready
 * with the check's words as the hand-over, which its detail says came back from landing. A fourth card,
 * never approved, wrote LQ-1's file too: once LQ-1 lands it is marked "conflicts with main", and its
 * detail says approving would send it back.
 */
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { after, before, describe, it } from 'node:test';

import type { Page } from 'playwright-core';

import type { RpcClient } from '../../core/protocol/rpc';
import { commitAllFiles, makeRepo, type TestRepo, writeFiles } from '../helpers/workspaceRepo';
import { waitFor } from '../helpers/waitFor';
import { BoardFixture } from './boardFixture';
import { cardIn, storeCard } from './boardPage';

const project = 'board-landing';
/** Sleeps 2 s on a tree with main's later change; fails when the clash meets it. */
const check = [
	'if ls main-*.txt >/dev/null 2>&1; then sleep 2;',
	'  if [ -e clash.txt ]; then echo "clash.txt meets main-1.txt"; exit 1; fi;',
	'fi',
].join(' ');

describe('board: the landing queue (Chromium, real hub, real git)', () => {
	let board: BoardFixture;
	let admin: RpcClient;
	let worker: RpcClient;
	let repo: TestRepo;
	let page: Page;
	let approvals: Promise<PromiseSettledResult<unknown>[]>;

	before(async () => {
		repo = makeRepo({ 'README.md': '# board landing\n' });
		board = await BoardFixture.start();
		admin = board.admin;
		worker = await board.agent('claude-land', 'mcp');
		await admin.request('project/settings/update', {
			project,
			worktrees: true,
			check,
			roots: { [hostname()]: repo.root },
		});
		// LQ-4 writes LQ-1's file too and is never approved: LQ-1's landing marks it as no longer merging.
		const files: Record<string, string> = {
			'LQ-1': 'one.txt',
			'LQ-2': 'two.txt',
			'LQ-3': 'clash.txt',
			'LQ-4': 'one.txt',
		};
		await admin.request('card/create', {
			cards: Object.keys(files).map(id => ({ id, title: `Land ${id}`, review: 'human' as const, project })),
		});
		for (const [id, file] of Object.entries(files)) {
			const claimed = await worker.request('card/claim', { cardId: id });
			assert.ok(claimed.workspace !== undefined, 'the claim made a worktree');
			writeFiles(claimed.workspace.path, { [file]: `work of ${id}\n` });
			await worker.request('card/complete', { cardId: id, epoch: claimed.lease?.epoch });
		}
		await waitFor(
			async () =>
				(await Promise.all(Object.keys(files).map(id => storeCard(admin, id)))).every(
					c => c.checks?.state === 'passed',
				),
			20_000,
			"every card's own check passed",
		);
		// Main moves under them: each landing's merged tree differs from its branch's, so its check reruns.
		writeFiles(repo.root, { 'main-1.txt': 'main moved\n' });
		commitAllFiles(repo.root, 'main moves');
		page = await board.newPage();
		await board.open(page);
		await cardIn(page, 'review', 'LQ-3').waitFor({ timeout: 5000 });
	});

	after(async () => {
		await approvals.catch(() => undefined);
		await board.stop();
		repo.cleanup();
	});

	it('shows one card landing and the others waiting in order, with the count in In review', async () => {
		const started = Date.now();
		approvals = Promise.allSettled(
			['LQ-1', 'LQ-2', 'LQ-3'].map(id => admin.request('card/review', { cardId: id, approve: true })),
		);
		const flags = page.locator('.column-review .flag-landing');
		await page.locator('.column-review .flag-landing', { hasText: 'Waiting to land · 3rd' }).waitFor({ timeout: 5000 });
		console.log(`all three in line on the board ${Date.now() - started} ms after the approvals were sent`);
		assert.deepEqual((await flags.allTextContents()).sort(), [
			'Landing now',
			'Waiting to land · 2nd',
			'Waiting to land · 3rd',
		]);
		const strip = page.locator('.column-review .column-landing');
		assert.equal(await strip.textContent(), '1 landing · 2 waiting');
		assert.equal(await strip.getAttribute('aria-label'), 'Landing queue: 1 landing · 2 waiting');
		const third = page.locator('.column-review .card', { has: page.locator('.flag-landing', { hasText: '3rd' }) });
		assert.match((await third.getAttribute('aria-label')) ?? '', /in review, Waiting to land · 3rd, approved by /);
		assert.match(
			(await third.locator('.flag-landing').getAttribute('title')) ?? '',
			/^Waiting to land on main · 3rd in line · approved by /,
		);
		// The detail pane of the last in line says its place and who approved it.
		await third.click();
		const box = page.locator('aside.detail .review-box--landing');
		await box.waitFor({ timeout: 3000 });
		assert.match((await box.textContent()) ?? '', /Waiting to land on main · (3rd|2nd) in line · approved by /);
		assert.equal(await page.locator('aside.detail .review-approve').count(), 0, 'approved already: no Approve');
		await page.keyboard.press('Escape');
	});

	it('takes the words away as they land; the one that came back is in Ready with why', async () => {
		await cardIn(page, 'done', 'LQ-1').waitFor({ timeout: 20_000 });
		await cardIn(page, 'done', 'LQ-2').waitFor({ timeout: 20_000 });
		const back = cardIn(page, 'ready', 'LQ-3');
		await back.waitFor({ timeout: 20_000 });
		await page.locator('.flag-landing').first().waitFor({ state: 'detached', timeout: 5000 });
		await page.locator('.column-review .column-landing').waitFor({ state: 'hidden', timeout: 5000 });
		const results = await approvals;
		assert.deepEqual(
			results.map(r => r.status),
			['fulfilled', 'fulfilled', 'rejected'],
		);
		assert.equal((await storeCard(admin, 'LQ-1')).status, 'done');
		assert.equal((await storeCard(admin, 'LQ-2')).status, 'done');
		const returned = await storeCard(admin, 'LQ-3');
		assert.equal(returned.status, 'ready');
		assert.match(returned.handoff ?? '', /clash\.txt meets main-1\.txt/);
		await back.click();
		const box = page.locator('aside.detail .review-box--handoff');
		await box.waitFor({ timeout: 3000 });
		const text = (await box.textContent()) ?? '';
		assert.match(text, /Came back from landing: its base did not move\. The next attempt starts from why:/);
		assert.match(text, /clash\.txt meets main-1\.txt/);
		await page.keyboard.press('Escape');
	});

	it('marks the card in review whose branch no longer merges after the landings', async () => {
		const marked = cardIn(page, 'review', 'LQ-4').locator('.flag-conflicts');
		await marked.waitFor({ timeout: 10_000 });
		assert.equal(await marked.textContent(), 'conflicts with main');
		assert.match(
			(await marked.getAttribute('title')) ?? '',
			/^No longer merges into main \(one\.txt\): approving would send it back/,
		);
		await cardIn(page, 'review', 'LQ-4').click();
		const note = page.locator('aside.detail .review-conflicts');
		await note.waitFor({ timeout: 3000 });
		assert.match(
			(await note.textContent()) ?? '',
			/no longer merges into main \(one\.txt\): approving would send it back/,
		);
	});
});
