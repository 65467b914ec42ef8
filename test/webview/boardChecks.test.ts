/**
 * The check before review on the board, in real headless Chromium against a real hub on a real git
 * repository (the hub makes the worktrees, commits at complete and runs the project's check): a card
 * whose check passed shows the "checks passed" badge in In review and says so in its review box; one
 * whose check still runs shows "checks running" and its review box offers no Approve; one a failed
 * check sent back shows "checks failed" in Ready, with the check's output as its hand-over.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { hostname } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { Page } from 'playwright-core';

import type { BacklogEvent } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { makeRepo, type TestRepo, writeFiles } from '../helpers/workspaceRepo';
import { BoardFixture } from './boardFixture';
import { cardIn } from './boardPage';

const project = 'board-checks';

describe('board: checks before review (Chromium, real hub, real git)', () => {
	let board: BoardFixture;
	let admin: RpcClient;
	let worker: RpcClient;
	let repo: TestRepo;
	let page: Page;
	let fifo: string;
	const finished = new Map<string, (e: BacklogEvent) => void>();

	/** Claims card `id` (its worktree made by the hub), writes a file there and completes it. */
	async function complete(id: string): Promise<void> {
		const claimed = await worker.request('card/claim', { cardId: id });
		assert.ok(claimed.workspace !== undefined, 'the claim made a worktree');
		writeFiles(claimed.workspace.path, { [`${id}.txt`]: `work of ${id}\n` });
		await worker.request('card/complete', { cardId: id, epoch: claimed.lease?.epoch });
	}

	/** Completes card `id` under `check` and waits for the hub to record how the check ended. */
	async function completeChecked(id: string, check: string): Promise<void> {
		await admin.request('project/settings/update', { project, check });
		const ended = new Promise<BacklogEvent>(resolve => finished.set(id, resolve));
		await complete(id);
		await ended;
	}

	before(async () => {
		repo = makeRepo({ 'README.md': '# board checks\n' });
		fifo = path.join(repo.parent, 'gate.fifo');
		execFileSync('mkfifo', [fifo]);
		board = await BoardFixture.start();
		admin = board.admin;
		admin.onEvent(e => {
			if (e.type === 'checks_finished') {
				finished.get(e.cardId)?.(e);
			}
		});
		await admin.subscribe((await admin.request('events/list', { limit: 1 })).lastSeq);
		worker = await board.agent('claude-ck', 'mcp');
		await admin.request('project/settings/update', { project, worktrees: true, roots: { [hostname()]: repo.root } });
		await admin.request('card/create', {
			cards: [
				{ id: 'CK-PASS', title: 'Add the parser', review: 'human', project, priority: 3 },
				{ id: 'CK-FAIL', title: 'Call the parser', review: 'human', project, priority: 2 },
				{ id: 'CK-RUN', title: 'Tidy the parser', review: 'human', project, priority: 1 },
			],
		});
		await completeChecked('CK-PASS', 'echo all green');
		await completeChecked('CK-FAIL', 'echo "not ok 1 - parse is not defined" >&2; exit 1');
		// This one's check waits on the named pipe until the test is done with it.
		await admin.request('project/settings/update', { project, check: `read line < ${fifo}` });
		await complete('CK-RUN');
		page = await board.newPage();
		await board.open(page);
	});

	after(async () => {
		// The hub's stop kills the check still waiting on the pipe.
		await board.stop();
		repo.cleanup();
	});

	it('a passed check: the badge on the card in In review, and the review box says so', async () => {
		const card = cardIn(page, 'review', 'CK-PASS');
		await card.waitFor({ timeout: 5000 });
		const badge = card.locator('.flag-checks-passed');
		assert.equal(await badge.textContent(), 'checks passed');
		assert.match((await badge.getAttribute('title')) ?? '', /^checks passed \(echo all green, \d+ s\)$/);
		await card.click();
		const box = page.locator('.review-box');
		await box.waitFor({ timeout: 5000 });
		assert.match((await box.textContent()) ?? '', /Checks passed \(echo all green, \d+ s\)\./);
		assert.equal(await box.locator('.review-approve').count(), 1, 'approvable');
	});

	it('a running check: the badge, and no Approve in the review box', async () => {
		const card = cardIn(page, 'review', 'CK-RUN');
		assert.equal(await card.locator('.flag-checks-running').textContent(), 'checks running');
		await card.click();
		const box = page.locator('.review-box');
		await box.getByText('Approve waits until the checks pass').waitFor({ timeout: 5000 });
		assert.equal(await box.locator('.review-approve').count(), 0);
	});

	it('a failed check: the card back in Ready with the badge and the output as its hand-over', async () => {
		const card = cardIn(page, 'ready', 'CK-FAIL');
		assert.equal(await card.locator('.flag-checks-failed').textContent(), 'checks failed');
		assert.match((await card.textContent()) ?? '', /checks failed: The check `echo/);
		await card.click();
		const box = page.locator('.review-box--handoff');
		await box.waitFor({ timeout: 5000 });
		const text = (await box.textContent()) ?? '';
		assert.match(text, /Checks failed \(echo .*, exit 1, \d+ s\)\. The next attempt starts from its output:/);
		assert.match(text, /not ok 1 - parse is not defined/);
	});
});
