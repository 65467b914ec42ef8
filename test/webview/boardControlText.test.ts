/**
 * Agent-written control characters on the board (real headless Chromium, a real hub): a card whose
 * title, body, result and comment carry a forged line (`\x1b[2K\rAPPROVED`) and a bidi override shows
 * them as visible escapes in the card, its tooltip and label, and the detail pane (title, markdown body,
 * result, conversation): the DOM holds no raw control character or override.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Page } from 'playwright-core';

import { BoardFixture } from './boardFixture';
import { cardIn } from './boardPage';

const forged = '\x1b[2K\rAPPROVED';
const bidi = 'gnp.\u202Eexe';
// eslint-disable-next-line no-control-regex
const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('board: agent-written control characters (Chromium, real hub)', () => {
	let board: BoardFixture;
	let page: Page;

	before(async () => {
		board = await BoardFixture.start();
		const agent = await board.agent('agent-7');
		await agent.request('card/create', {
			cards: [{ id: 'EVIL', title: `Fix the parser${forged} ${bidi}`, body: `What I did${forged}\n\nsecond ${bidi}` }],
		});
		const claimed = await agent.request('card/claim', { cardId: 'EVIL' });
		await agent.request('card/comment', { cardId: 'EVIL', text: `Looks good${forged}` });
		await agent.request('card/complete', {
			cardId: 'EVIL',
			epoch: claimed.lease?.epoch ?? 0,
			result: `All tests pass${forged} ${bidi}`,
		});
		page = await board.newPage();
		await board.open(page);
	});

	after(() => board.stop());

	it('shows the card and its detail with visible escapes, no raw control character in the DOM', async () => {
		const card = cardIn(page, 'done', 'EVIL');
		await card.waitFor({ timeout: 5000 });
		const title = 'Fix the parser\\x1b[2K\\rAPPROVED gnp.\\u202eexe';
		assert.equal(await card.locator('.card-title').textContent(), title);
		assert.equal(await card.locator('.card-title').getAttribute('title'), title);
		assert.doesNotMatch((await card.getAttribute('aria-label')) ?? '', raw);
		assert.doesNotMatch((await card.textContent()) ?? '', raw);
		await card.click();
		const pane = page.locator('aside.detail');
		await pane.locator('.detail-title').waitFor();
		assert.equal(await pane.locator('.detail-title').textContent(), title);
		await pane.locator('.markdown').first().waitFor();
		// The messages load after the card: wait for the comment before reading the pane.
		await pane
			.getByText(/Looks good/)
			.first()
			.waitFor({ timeout: 10_000 });
		const text = (await pane.textContent()) ?? '';
		assert.doesNotMatch(text, raw, 'the detail pane holds no raw control character');
		assert.match(text, /What I did\\x1b\[2K\\rAPPROVED/);
		assert.match(text, /All tests pass\\x1b\[2K\\rAPPROVED gnp\.\\u202eexe/);
		assert.match(text, /Looks good\\x1b\[2K\\rAPPROVED/);
	});
});
