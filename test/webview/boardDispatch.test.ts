/**
 * Dispatch on the board, in real headless Chromium against a real hub: a card a dispatched
 * agent holds (claimed with the supervisor's hidden `dispatch` param, output lines recorded with
 * `dispatch/update`, as `baton run` does) shows "running in seat 2, 4 min" and its last output line,
 * which follows the feed; an assigned card shows its assignee chip; a pause set elsewhere shows as a
 * banner with who and why, marks the ready cards it holds back and is resumed from the board by
 * keyboard; a waiting card's detail shows its effective priority while cards age; the board's own
 * Pause button asks first, then pauses everything under the board's name.
 * The page's clock runs 4 minutes ahead of the hub's, so the seat's elapsed time reads "4 min".
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Page } from 'playwright-core';

import type { RpcClient } from '../../core/protocol/rpc';

import { BoardFixture } from './boardFixture';
import { type PageWatch, cardIn, watch, watchScript } from './boardPage';

const ahead = 4 * 60_000 + 10_000;

describe('board: dispatched cards, assignees and pauses (Chromium, real hub)', () => {
	let board: BoardFixture;
	let admin: RpcClient;
	let seat: RpcClient;
	let epoch: number;
	let page: Page;
	let pageWatch: PageWatch;

	before(async () => {
		board = await BoardFixture.start();
		admin = board.admin;
		await admin.request('card/create', {
			cards: [
				{ id: 'DSP-1', title: 'Port the tokenizer to the v2 grammar', priority: 3 },
				{ id: 'ASG-1', title: 'Write the release notes', priority: 2 },
				{ id: 'RDY-1', title: 'Rename the config loader', priority: 1 },
			],
		});
		// The seat connection `baton run` opens for seat 2: its own agent id and kind.
		seat = await board.agent('claude-default-s2-k3f9', 'mcp', { kind: 'claude' });
		const claimed = await seat.request('card/claim', {
			cardId: 'DSP-1',
			dispatch: { run: 'default', seat: 2, kind: 'claude' },
		});
		assert.equal(claimed.card?.dispatch?.seat, 2);
		epoch = claimed.lease?.epoch ?? 0;
		await seat.request('dispatch/update', {
			cardId: 'DSP-1',
			epoch,
			pid: 4242,
			output: ['Reading src/tokenizer.ts', 'Editing src/tokenizer.ts: 3 hunks'],
		});
		await admin.request('card/assign', { cardId: 'ASG-1', assignee: 'kind:codex' });
		page = await board.newPage();
		pageWatch = watch(page);
		await page.addInitScript(watchScript);
		await page.clock.install({ time: Date.now() + ahead });
		await board.open(page);
	});

	after(() => board.stop());

	it('shows a dispatched card running in its seat, with its last output line', async () => {
		const card = cardIn(page, 'inProgress', 'DSP-1');
		await card.waitFor({ timeout: 5000 });
		assert.equal(await card.locator('.card-note').textContent(), 'running in seat 2, 4 min');
		assert.equal(await card.locator('.owner-name').textContent(), 'claude');
		const output = card.locator('.card-output');
		assert.equal(await output.textContent(), 'Editing src/tokenizer.ts: 3 hunks');
		assert.equal(await output.getAttribute('title'), 'Reading src/tokenizer.ts\nEditing src/tokenizer.ts: 3 hunks');
		assert.match(
			(await card.getAttribute('aria-label')) ?? '',
			/running in seat 2, 4 min, Editing src\/tokenizer\.ts: 3 hunks/,
		);
		// Both the title's line and the output line fit in the card's fixed height.
		const [cardBox, outBox] = await Promise.all([card.boundingBox(), output.boundingBox()]);
		assert.ok(
			cardBox && outBox && outBox.y + outBox.height <= cardBox.y + cardBox.height,
			'output line inside the card',
		);
	});

	it('follows the agent’s output as the supervisor records it', async () => {
		await seat.request('dispatch/update', {
			cardId: 'DSP-1',
			epoch,
			output: ['Editing src/tokenizer.ts: 3 hunks', 'Running npm test: 41 passed'],
		});
		const output = cardIn(page, 'inProgress', 'DSP-1').locator('.card-output');
		await page.waitForFunction(
			() =>
				document.querySelector('.card[data-id="DSP-1"] .card-output')?.textContent === 'Running npm test: 41 passed',
			undefined,
			{ timeout: 3000 },
		);
		assert.equal(await output.textContent(), 'Running npm test: 41 passed');
	});

	it('shows an assigned card’s assignee as a chip', async () => {
		const chip = cardIn(page, 'ready', 'ASG-1').locator('.flag-assignee');
		assert.equal(await chip.textContent(), '→ codex');
		assert.match((await chip.getAttribute('title')) ?? '', /assigned to any codex agent/);
		assert.equal(await cardIn(page, 'ready', 'RDY-1').locator('.flag-assignee').count(), 0);
	});

	it('shows a waiting card’s effective priority in its detail while the backlog ages cards', async () => {
		// One step per 1.8 s of waiting: ASG-1 has waited longer than that by now.
		await admin.request('settings/update', { agingHours: 0.0005 });
		await new Promise(r => setTimeout(r, 2000));
		await cardIn(page, 'ready', 'ASG-1').click();
		await page.waitForFunction(() => document.querySelector('.detail .facts')?.textContent.includes('with aging'));
		const facts = (await page.locator('.detail .facts').textContent()) ?? '';
		const m = /Priority2, (\d+) with aging \(\+(\d+) for waiting\)/.exec(facts);
		assert.ok(m !== null, facts);
		assert.equal(Number(m[1]) - 2, Number(m[2]));
		assert.ok(Number(m[2]) >= 1);
		await admin.request('settings/update', { agingHours: null });
		await page.keyboard.press('Escape');
	});

	it('shows a pause set elsewhere with who and why, and resumes it by keyboard', async () => {
		const banner = page.locator('.banner-pause');
		assert.equal(await banner.isHidden(), true, 'no banner while nothing is paused');
		await admin.request('pause/set', { scope: 'all', reason: 'deploy freeze until 14:00' });
		await banner.waitFor({ state: 'visible', timeout: 3000 });
		assert.equal(
			await banner.locator('.banner-text').textContent(),
			'Paused: everything — paused by planner: deploy freeze until 14:00',
		);
		const flag = cardIn(page, 'ready', 'RDY-1').locator('.flag-paused');
		await flag.waitFor({ timeout: 3000 });
		assert.equal(await flag.getAttribute('title'), 'paused by planner: deploy freeze until 14:00');
		// A claimed card is not "paused": its agent finishes it (drain).
		assert.equal(await cardIn(page, 'inProgress', 'DSP-1').locator('.flag-paused').count(), 0);
		assert.equal(await page.locator('.toolbar button', { hasText: 'Pause' }).isDisabled(), true);

		const resume = banner.getByRole('button', { name: 'Resume everything' });
		await resume.focus();
		await page.keyboard.press('Enter');
		await banner.waitFor({ state: 'hidden', timeout: 3000 });
		assert.deepEqual((await admin.request('pause/list', {})).pauses, []);
		await flag.waitFor({ state: 'detached', timeout: 3000 });
	});

	it('pauses everything from the Pause button after asking, under the board’s name', async () => {
		const pause = page.locator('.toolbar button', { hasText: 'Pause' });
		await pause.click();
		const dialog = page.locator('dialog[open]');
		await dialog.waitFor();
		assert.match((await dialog.textContent()) ?? '', /Pause every card\?/);
		// Cancel changes nothing.
		await dialog.getByRole('button', { name: 'Cancel' }).click();
		await dialog.waitFor({ state: 'detached' });
		assert.deepEqual((await admin.request('pause/list', {})).pauses, []);

		await pause.click();
		await page.locator('dialog[open] input').fill('reviewing the failed runs');
		await page.keyboard.press('Enter');
		const banner = page.locator('.banner-pause');
		await banner.waitFor({ state: 'visible', timeout: 3000 });
		const actor = await page.evaluate(() => document.body.dataset.actor);
		const [stored] = (await admin.request('pause/list', {})).pauses;
		assert.equal(stored?.scope, 'all');
		assert.equal(stored.by, actor);
		assert.equal(stored.reason, 'reviewing the failed runs');
		assert.match((await banner.textContent()) ?? '', /reviewing the failed runs/);
		await banner.getByRole('button', { name: 'Resume everything' }).click();
		await banner.waitFor({ state: 'hidden', timeout: 3000 });
	});

	it('raised no page errors, dialogs or CSP violations', async () => {
		const csp = await page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations);
		assert.deepEqual(csp, []);
		assert.deepEqual(pageWatch.dialogs, []);
		assert.deepEqual(pageWatch.errors, []);
	});
});
