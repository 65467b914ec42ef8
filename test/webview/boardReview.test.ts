/**
 * The review gate, messages and questions on the board, in real headless Chromium
 * against a real hub: agents are hub protocol clients of kind 'mcp' (what card/review treats as an
 * agent), each with its own identity; the board is the human. Cards in review show in In review with
 * who completed them; a drop on Done approves and frees the dependent; a drop on Ready asks for the
 * note (cancel changes nothing); refused drops say why; an agent's question shows a badge and a
 * count, a reply typed in the detail pane reaches the hub, and its delivery shows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Page } from 'playwright-core';

import type { RpcClient } from '../../core/protocol/rpc';

import { BoardFixture } from './boardFixture';
import { type PageWatch, cardIn, columnPoint, drag, storeCard, waitForStore, watch, watchScript } from './boardPage';

const result =
	'Added the endpoint. See [PR 42](https://example.com/pr/42) and **run the migration** first.\n\n' +
	'Hostile bits stay text: <img src=x onerror=alert(7)> [bad](javascript:alert(8))';

describe('board: review gate, messages and questions (Chromium, real hub)', () => {
	let board: BoardFixture;
	let admin: RpcClient;
	let worker: RpcClient;
	let reviewer: RpcClient;
	let other: RpcClient;
	let page: Page;
	let pageWatch: PageWatch;

	const agent = (id: string, capabilities: string[]): Promise<RpcClient> => board.agent(id, 'mcp', { capabilities });

	before(async () => {
		board = await BoardFixture.start();
		admin = board.admin;
		worker = await agent('claude-rev', ['lang:ts']);
		reviewer = await agent('reviewer-1', ['review']);
		other = await agent('codex-next', ['lang:ts']);
		await admin.request('card/create', {
			cards: [
				{ id: 'REV-1', title: 'Add the export endpoint', review: 'human', priority: 5 },
				{ id: 'DEP-R1', title: 'Document the export endpoint', dependsOn: ['REV-1'] },
				{ id: 'REV-2', title: 'Paginate the export', review: 'human', priority: 4 },
				{ id: 'REV-3', title: 'Tidy the export module', review: 'agent', priority: 3 },
				{ id: 'ASK-1', title: 'Call the payments API', priority: 2 },
				{ id: 'MINE-1', title: 'Review my own work?', review: 'human', priority: 1 },
			],
		});
		for (const id of ['REV-1', 'REV-2', 'REV-3']) {
			const { lease } = await worker.request('card/claim', { cardId: id });
			await worker.request('card/complete', { cardId: id, epoch: lease?.epoch, result });
		}
		await reviewer.request('card/claim', { cardId: 'REV-3', review: true, capabilities: ['review'] });
		page = await board.newPage();
		pageWatch = watch(page);
		await page.addInitScript(watchScript);
		await board.open(page);
	});

	after(() => board.stop());

	it('shows cards in review in In review, with who completed them and who reviews them', async () => {
		const rev1 = cardIn(page, 'review', 'REV-1');
		await rev1.waitFor({ timeout: 5000 });
		assert.match((await rev1.textContent()) ?? '', /completed by claude-rev/);
		assert.equal(await rev1.locator('.flag-review').textContent(), 'review: human');
		const rev3 = cardIn(page, 'review', 'REV-3');
		assert.equal(await rev3.locator('.flag-review').textContent(), 'review: agent');
		assert.match((await rev3.textContent()) ?? '', /reviewer-1 reviewing/);
		assert.match(
			(await rev3.getAttribute('aria-label')) ?? '',
			/in review, completed by claude-rev, .*reviewed by reviewer-1/,
		);
		assert.equal(await page.locator('.column-review .column-count').textContent(), '3');
		assert.equal(await page.locator('.column-review .column-title').textContent(), 'In review');
	});

	it('shows the result as safe markdown with links, and Approve / Request changes in the detail', async () => {
		await cardIn(page, 'review', 'REV-1').click();
		const pane = page.locator('aside.detail');
		await pane.locator('.detail-id', { hasText: 'REV-1' }).waitFor();
		const link = pane.locator('.detail-result a', { hasText: 'PR 42' });
		assert.equal(await link.getAttribute('href'), 'https://example.com/pr/42');
		assert.equal(await link.getAttribute('target'), '_blank');
		assert.equal(await pane.locator('.detail-result strong').textContent(), 'run the migration');
		assert.equal(await pane.locator('.detail-result img, .detail-result a[href^="javascript:"]').count(), 0);
		assert.match((await pane.locator('.detail-result').textContent()) ?? '', /<img src=x onerror=alert\(7\)>/);
		assert.match((await pane.locator('.review-box').textContent()) ?? '', /Completed by claude-rev/);
		assert.equal(await pane.locator('.review-box button', { hasText: 'Approve' }).count(), 1);
		assert.equal(await pane.locator('.review-box button', { hasText: 'Request changes' }).count(), 1);
		await page.keyboard.press('Escape');
		await pane.waitFor({ state: 'hidden' });
	});

	it('approves by a drag to Done, and the dependent becomes claimable', async () => {
		await drag(page, cardIn(page, 'review', 'REV-1'), await columnPoint(page, 'done', 0.8));
		await cardIn(page, 'done', 'REV-1').waitFor({ timeout: 3000 });
		await waitForStore(admin, 'REV-1', c => c.status === 'done', 'the approval');
		const history = (await admin.request('card/get', { cardId: 'REV-1' })).history;
		assert.equal(history.at(-1)?.type, 'approved');
		const actor = await page.evaluate(() => document.body.dataset.actor);
		assert.equal(history.at(-1)?.actor, actor);
		const claimed = await other.request('card/claim', { cardId: 'DEP-R1' });
		assert.equal(claimed.card?.id, 'DEP-R1', 'the dependent is claimable once its dependency is approved');
		await cardIn(page, 'inProgress', 'DEP-R1').waitFor({ timeout: 3000 });
	});

	it('asks for a note before requesting changes: cancel changes nothing, the note sends it back', async () => {
		await drag(page, cardIn(page, 'review', 'REV-2'), await columnPoint(page, 'ready', 0.8));
		const dialog = page.locator('dialog[open]');
		await dialog.waitFor();
		assert.match((await dialog.textContent()) ?? '', /What should change in REV-2\?/);
		await dialog.locator('button[value="cancel"]').click();
		await dialog.waitFor({ state: 'detached' });
		await page.waitForTimeout(200);
		assert.equal(await cardIn(page, 'review', 'REV-2').count(), 1);
		assert.equal((await storeCard(admin, 'REV-2')).status, 'review', 'cancelled: nothing changed');

		const note = 'Handle the empty export too, and add a test for it.';
		await drag(page, cardIn(page, 'review', 'REV-2'), await columnPoint(page, 'ready', 0.8));
		await dialog.waitFor();
		await dialog.locator('input').fill(note);
		await dialog.locator('button[value="ok"]').click();
		await cardIn(page, 'ready', 'REV-2').waitFor({ timeout: 3000 });
		const back = await waitForStore(admin, 'REV-2', c => c.status === 'ready', 'the request for changes');
		assert.equal(back.handoff, note);
		assert.match((await cardIn(page, 'ready', 'REV-2').textContent()) ?? '', /changes requested: Handle the empty/);

		await cardIn(page, 'ready', 'REV-2').click();
		const pane = page.locator('aside.detail');
		await pane.locator('.detail-id', { hasText: 'REV-2' }).waitFor();
		await pane.locator('.review-note', { hasText: note }).waitFor();
		const attempt = pane.locator('.attempts li', { hasText: 'changes requested' });
		await attempt.waitFor();
		assert.match((await attempt.textContent()) ?? '', /claude-rev: changes requested · note: Handle the empty export/);
		await page.keyboard.press('Escape');
	});

	it('refuses drops that make no sense for In review, with the reason', async () => {
		const banner = page.locator('.banner-error');
		await drag(page, cardIn(page, 'review', 'REV-3'), await columnPoint(page, 'inProgress', 0.8));
		await banner.waitFor({ state: 'visible' });
		assert.match(
			(await banner.textContent()) ?? '',
			/REV-3 is in review: approve it \(move it to Done\) or request changes/,
		);
		await page.locator('.banner-error button').click();

		await drag(page, cardIn(page, 'ready', 'ASK-1'), await columnPoint(page, 'review', 0.8));
		await banner.waitFor({ state: 'visible' });
		assert.match(
			(await banner.textContent()) ?? '',
			/ASK-1 is ready: a card comes to In review when the agent working on it/,
		);
		await page.locator('.banner-error button').click();
		assert.equal((await storeCard(admin, 'REV-3')).status, 'review');
		assert.equal((await storeCard(admin, 'ASK-1')).status, 'ready');
	});

	it('submits its own claim for review and then refuses to let the board approve its own work', async () => {
		await drag(page, cardIn(page, 'ready', 'MINE-1'), await columnPoint(page, 'inProgress', 0.8));
		await waitForStore(admin, 'MINE-1', c => c.status === 'claimed', 'the board’s claim');
		await drag(page, cardIn(page, 'inProgress', 'MINE-1'), await columnPoint(page, 'done', 0.8));
		await cardIn(page, 'review', 'MINE-1').waitFor({ timeout: 3000 });
		const actor = await page.evaluate(() => document.body.dataset.actor);
		const mine = await waitForStore(admin, 'MINE-1', c => c.status === 'review', 'the submission');
		assert.equal(mine.completedBy, actor);
		assert.match((await cardIn(page, 'review', 'MINE-1').textContent()) ?? '', /completed by you/);

		await drag(page, cardIn(page, 'review', 'MINE-1'), await columnPoint(page, 'done', 0.8));
		const banner = page.locator('.banner-error');
		await banner.waitFor({ state: 'visible' });
		assert.match((await banner.textContent()) ?? '', /You completed MINE-1, so you cannot review it/);
		await page.locator('.banner-error button').click();
		assert.equal((await storeCard(admin, 'MINE-1')).status, 'review');
	});

	it('approves from the keyboard (Ctrl+Shift+→ from In review), confirming over a reviewing agent', async () => {
		await cardIn(page, 'review', 'REV-3').focus();
		await page.keyboard.press('Control+Shift+ArrowRight');
		const dialog = page.locator('dialog[open]');
		await dialog.waitFor();
		assert.match((await dialog.textContent()) ?? '', /reviewer-1 is reviewing REV-3/);
		await dialog.locator('button[value="ok"]').click();
		await cardIn(page, 'done', 'REV-3').waitFor({ timeout: 3000 });
		const done = await waitForStore(admin, 'REV-3', c => c.status === 'done', 'a keyboard approval');
		assert.equal(done.claimOwner, null, "the reviewing agent's lease ended");
	});

	it('badges a question, counts it, and sends the reply typed in the detail to the hub', async () => {
		const { lease } = await worker.request('card/claim', { cardId: 'ASK-1' });
		assert.ok(lease);
		await worker.request('card/comment', {
			cardId: 'ASK-1',
			text: 'Which API version should I use: **v1** or v2?',
			question: true,
		});
		const card = cardIn(page, 'inProgress', 'ASK-1');
		await card.locator('.flag-input').waitFor({ timeout: 3000 });
		assert.match((await card.getAttribute('aria-label')) ?? '', /needs your input/);
		const count = page.locator('.toolbar .needs-input-count');
		await count.waitFor({ state: 'visible' });
		assert.equal(await count.textContent(), '1 question');

		await count.click();
		const pane = page.locator('aside.detail');
		await pane.locator('.detail-id', { hasText: 'ASK-1' }).waitFor();
		const question = pane.locator('.message--question');
		await question.waitFor();
		assert.match((await question.textContent()) ?? '', /claude-rev.*question/s);
		assert.equal(await question.locator('.message-text strong').textContent(), 'v1');
		const box = pane.getByRole('textbox', { name: "Reply to claude-rev's question" });
		await box.waitFor();
		assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('message-input')), true);
		assert.match((await pane.locator('.message-count').textContent()) ?? '', /0 \/ 4,096 bytes/);

		await box.fill('Use v2, the v1 endpoints are going away.');
		await box.press('Control+Enter');
		const actor = await page.evaluate(() => document.body.dataset.actor);
		await waitForStore(admin, 'ASK-1', c => c.needsInput !== true, 'the answered question');
		const { messages } = await admin.request('card/get', { cardId: 'ASK-1' });
		assert.deepEqual(
			messages.map(m => [m.from, m.text, m.question]),
			[
				['claude-rev', 'Which API version should I use: **v1** or v2?', true],
				[actor, 'Use v2, the v1 endpoints are going away.', false],
			],
		);
		await card.locator('.flag-input').waitFor({ state: 'detached', timeout: 3000 });
		await count.waitFor({ state: 'hidden' });
		// The label followed the card: no question pending, so the box now messages the holder.
		assert.match((await pane.locator('.message-label').textContent()) ?? '', /Message claude-rev/);
		assert.equal(await pane.locator('.message-input').inputValue(), '', 'the box is cleared once sent');
		const reply = pane.locator('.message', { hasText: 'Use v2' });
		await reply.waitFor();
		assert.match((await reply.textContent()) ?? '', /not delivered yet/);
	});

	it('shows when the holder got the message ("delivered"), live', async () => {
		const pane = page.locator('aside.detail');
		const { messages } = await admin.request('card/get', { cardId: 'ASK-1' });
		const reply = messages.at(-1);
		assert.ok(reply);
		const { delivered } = await worker.request('inbox/ack', { messages: [{ cardId: 'ASK-1', id: reply.id }] });
		assert.equal(delivered.length, 1);
		const shown = pane.locator('.message', { hasText: 'Use v2' }).locator('.message-delivered');
		await shown.waitFor({ timeout: 3000 });
		assert.match((await shown.textContent()) ?? '', /^delivered /);
		assert.equal(await shown.getAttribute('datetime'), delivered[0]?.deliveredAt);
	});

	it('shows the 4 KiB limit and refuses an oversized message without sending it', async () => {
		const pane = page.locator('aside.detail');
		const box = pane.locator('.message-input');
		await box.fill('é'.repeat(2049));
		const count = pane.locator('.message-count');
		assert.match((await count.textContent()) ?? '', /4,098 \/ 4,096 bytes: too long/);
		assert.equal(await pane.locator('.message-send').isDisabled(), true);
		await box.press('Control+Enter');
		await pane.locator('.message-error', { hasText: 'over 4 KiB' }).waitFor();
		assert.equal((await admin.request('card/get', { cardId: 'ASK-1' })).messages.length, 2, 'nothing was sent');
		await box.fill('');
		await page.keyboard.press('Escape');
	});

	it('creates a card that needs a human review from the form, and edits it back to none', async () => {
		await page.locator('body').press('n');
		const form = page.locator('dialog[open]');
		await form.locator('input[name="title"]').fill('Rotate the signing keys');
		await form.locator('input[name="id"]').fill('KEYS-1');
		await form.locator('select[name="review"]').selectOption('human');
		await form.locator('button[type="submit"]').click();
		await cardIn(page, 'ready', 'KEYS-1').waitFor({ timeout: 3000 });
		await waitForStore(admin, 'KEYS-1', c => c.review === 'human', 'a card created with review: human');
		await page.keyboard.press('Escape');
		await cardIn(page, 'ready', 'KEYS-1').click();
		const pane = page.locator('aside.detail');
		await pane.locator('.detail-id', { hasText: 'KEYS-1' }).waitFor();
		await pane.locator('button', { hasText: 'Edit' }).click();
		assert.equal(await form.locator('select[name="review"]').inputValue(), 'human');
		await form.locator('select[name="review"]').selectOption('none');
		await form.locator('button[type="submit"]').click();
		await waitForStore(admin, 'KEYS-1', c => c.review === 'none', 'the review edited away');
		await page.keyboard.press('Escape');
	});

	it('had no CSP violations, page errors or dialogs', async () => {
		const violations = await page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations);
		assert.deepEqual(violations, []);
		assert.deepEqual(pageWatch.errors, []);
		assert.deepEqual(pageWatch.dialogs, []);
	});
});
