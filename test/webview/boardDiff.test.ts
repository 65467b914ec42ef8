/**
 * A card's changes on the board, in real headless Chromium against a real hub on
 * PostgreSQL: an agent's card in review whose workspace is a real worktree and branch of a test
 * repository (recorded through a second Backlog on the schema, test/helpers/workspaceCards.ts). Its
 * detail lists the changed files with +/− counts and shows the unified diff; HTML in the files' text
 * stays text (no element, no script, no CSP violation); the file list works from the keyboard; a diff
 * over the cap says so and loads a left-out file on demand; a card without a workspace has no Changes
 * section; a workspace on another host says why there is no diff.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Page } from 'playwright-core';

import type { Backlog } from '../../core/backlog';
import type { RpcClient } from '../../core/protocol/rpc';
import { dropSchema, testDatabaseUrl, uniqueSchema } from '../helpers/backlog';
import { hubEnv } from '../helpers/hub';
import { giveWorkspace, schemaBacklog } from '../helpers/workspaceCards';
import { type TestRepo, makeRepo } from '../helpers/workspaceRepo';
import { BoardFixture } from './boardFixture';
import { type PageWatch, cardIn, watch, watchScript } from './boardPage';

const hostile = '<img src=x onerror="window.__pwned=1"><b>bold?</b>';
/** 6,000 lines, about 420 KB of patch: two of them are over card/diff's 512 KiB cap. */
const big = Array.from({ length: 6000 }, (_, i) => `line ${i} ${'x'.repeat(60)}\n`).join('');

describe('board: a card’s changes (Chromium, real hub, real git)', () => {
	const schema = uniqueSchema();
	let board: BoardFixture;
	let backlog: Backlog;
	let worker: RpcClient;
	let repo: TestRepo;
	let page: Page;
	let pageWatch: PageWatch;

	before(async () => {
		board = await BoardFixture.start(hubEnv({ DATABASE_URL: testDatabaseUrl, BATON_PG_SCHEMA: schema }));
		backlog = await schemaBacklog(schema);
		worker = await board.agent('claude-diff', 'mcp');
		repo = makeRepo({ 'README.md': '# demo\n', 'src/page.html': '<p>old</p>\n', 'gone.txt': 'bye\n' });
		await board.admin.request('card/create', {
			cards: [
				{ id: 'DIFF-1', title: 'Rework the page', review: 'human', priority: 3 },
				{ id: 'FAR-1', title: 'Work on another machine', review: 'human', priority: 2 },
				{ id: 'PLAIN-1', title: 'No workspace here', review: 'human', priority: 1 },
				{ id: 'BIG-1', title: 'Regenerate the fixtures', review: 'human', priority: 0 },
			],
		});
		for (const id of ['DIFF-1', 'FAR-1', 'PLAIN-1', 'BIG-1']) {
			const { lease } = await worker.request('card/claim', { cardId: id });
			if (id === 'DIFF-1') {
				await giveWorkspace(backlog, repo.root, id, { 'src/page.html': `<p>new</p>\n${hostile}\n`, 'gone.txt': null });
			} else if (id === 'BIG-1') {
				await giveWorkspace(backlog, repo.root, id, { 'a-small.txt': 'small\n', 'b-big.txt': big, 'c-big.txt': big });
			} else if (id === 'FAR-1') {
				await giveWorkspace(backlog, repo.root, id, { 'far.txt': 'far\n' }, { host: 'build-box-7' });
			}
			await worker.request('card/complete', { cardId: id, epoch: lease?.epoch, result: 'Done.' });
		}
		page = await board.newPage();
		pageWatch = watch(page);
		await page.addInitScript(watchScript);
		await board.open(page);
	});

	after(async () => {
		await board.stop();
		await backlog.close();
		await dropSchema(schema);
		repo.cleanup();
	});

	it('lists the changed files with +/− counts and shows the diff, HTML in files as text', async () => {
		await cardIn(page, 'review', 'DIFF-1').click();
		const pane = page.locator('aside.detail');
		const changes = pane.locator('.diff-section');
		await changes.locator('.diff-file-list').waitFor({ timeout: 10_000 });
		assert.equal(await changes.locator('.detail-heading').textContent(), 'Changes');
		assert.match(
			(await changes.locator('.diff-summary').textContent()) ?? '',
			/^2 files changed, \+2 −2 · baton\/DIFF-1 → main \([0-9a-f]{8}\)$/,
		);
		const items = changes.locator('.diff-file-item');
		assert.deepEqual(await items.allTextContents(), ['deletedgone.txt+0 −1', 'modifiedsrc/page.html+2 −1']);
		assert.equal(await changes.locator('details.diff-file').count(), 2);
		const page1 = changes.locator('details.diff-file', { hasText: 'src/page.html' });
		assert.deepEqual(await page1.locator('.diff-add .diff-text').allTextContents(), ['+<p>new</p>', `+${hostile}`]);
		assert.deepEqual(await page1.locator('.diff-rem .diff-text').allTextContents(), ['-<p>old</p>']);
		assert.equal(await page1.locator('.diff-hunk').first().textContent(), '@@ -1,1 +1,2 @@');
		assert.equal(await pane.locator('img, b').count(), 0, 'no element from the file’s text');
		assert.equal(await page.evaluate(() => (window as { __pwned?: number }).__pwned), undefined);
		assert.deepEqual(await page.evaluate(() => (window as { __cspViolations?: string[] }).__cspViolations), []);
		assert.deepEqual(pageWatch.errors, []);
	});

	it('jumps from the file list to a file’s diff with the keyboard', async () => {
		const changes = page.locator('aside.detail .diff-section');
		const link = changes.locator('.diff-file-link', { hasText: 'gone.txt' });
		await link.focus();
		await page.keyboard.press('Enter');
		const focused = await page.evaluate(() => document.activeElement?.closest('details')?.textContent ?? '');
		assert.match(focused, /^gone\.txtdeleted\+0 −1/);
		await page.keyboard.press('Escape');
		await page.locator('aside.detail').waitFor({ state: 'hidden' });
	});

	it('says when the diff was cut, and loads a file it left out on demand', async () => {
		await cardIn(page, 'review', 'BIG-1').click();
		const pane = page.locator('aside.detail');
		await pane.locator('.detail-id', { hasText: 'BIG-1' }).waitFor();
		const changes = pane.locator('.diff-section');
		await changes.locator('.diff-file-list').waitFor({ timeout: 10_000 });
		assert.equal(await changes.locator('.diff-file-item').count(), 3, 'every file is listed');
		assert.match(
			(await changes.locator('.diff-cut').textContent()) ?? '',
			/^The diff is \d+ KB: only its first \d+ KB are shown\. Choose a file below .*git diff main\.\.\.baton\/BIG-1/,
		);
		// Each big file's one hunk is over a file's budget (diffLimits.fileBytes): left out, loaded alone.
		assert.deepEqual(await changes.locator('details.diff-file .diff-path').allTextContents(), ['a-small.txt']);
		await changes.locator('.diff-file-link', { hasText: 'c-big.txt' }).click();
		const c = changes.locator('details.diff-file', { hasText: 'c-big.txt' });
		await c.waitFor({ timeout: 10_000 });
		assert.equal(await c.locator('.diff-add').count(), 6000);
		assert.equal(await page.evaluate(() => document.activeElement?.closest('details')?.id), await c.getAttribute('id'));
		await page.keyboard.press('Escape');
		await pane.waitFor({ state: 'hidden' });
	});

	it('says why a card has no diff here, and shows no Changes for a card without a workspace', async () => {
		await cardIn(page, 'review', 'FAR-1').click();
		const pane = page.locator('aside.detail');
		await pane.locator('.detail-id', { hasText: 'FAR-1' }).waitFor();
		const error = pane.locator('.diff-section .diff-error');
		await error.waitFor({ timeout: 10_000 });
		assert.match((await error.textContent()) ?? '', /on the machine build-box-7/);
		await page.keyboard.press('Escape');
		await cardIn(page, 'review', 'PLAIN-1').click();
		await pane.locator('.detail-id', { hasText: 'PLAIN-1' }).waitFor();
		await pane.locator('.detail-section').first().waitFor();
		assert.equal(await pane.locator('.diff-section').count(), 0);
	});
});
