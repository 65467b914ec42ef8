/**
 * Projects and scopes on the board, in headless Chromium against a real hub: the project choice (All projects by
 * default in a browser tab, each project seen among the cards, remembered in localStorage across a
 * reload, the helpful empty state and its way back), the scope chip of a card, and "waits on files
 * held by …" on a ready card whose scope meets another agent's live claim, which goes away when that
 * claim completes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Page } from 'playwright-core';

import type { RpcClient } from '../../core/protocol/rpc';

import { BoardFixture } from './boardFixture';
import { cardIn } from './boardPage';

const web = 'github.com/acme/web';
const api = 'github.com/acme/api';

describe('board: projects and scopes (Chromium, real hub)', () => {
	let board: BoardFixture;
	let admin: RpcClient;
	let agent: RpcClient;
	let page: Page;

	const open = (): Promise<void> => board.open(page);
	const shown = async (): Promise<string[]> =>
		(await page.locator('.board .card[data-id]').evaluateAll(els => els.map(e => (e as HTMLElement).dataset.id ?? '')))
			.filter(id => id !== '')
			.sort();

	before(async () => {
		board = await BoardFixture.start();
		admin = board.admin;
		agent = await board.agent('claude-code-1');
		await admin.request('card/create', {
			cards: [
				{ id: 'AUTH-3', title: 'Session cookie hardening', project: web, scope: ['src/auth/**'], priority: 5 },
				{ id: 'AUTH-4', title: 'Login rate limit', project: web, scope: ['src/auth/login.ts', 'docs/**'] },
				{ id: 'API-1', title: 'Paginate the orders API', project: api, scope: ['src/orders/**'] },
			],
		});
		await agent.request('card/claim', { cardId: 'AUTH-3' });
		page = await board.newPage();
		await open();
	});

	after(() => board.stop());

	it('starts at All projects in a browser tab; a project choice filters and survives a reload', async () => {
		const select = page.locator('select.filter-project');
		assert.equal(await select.inputValue(), '', 'All projects');
		assert.deepEqual(await select.locator('option').allTextContents(), ['All projects', api, web]);
		assert.deepEqual(await shown(), ['API-1', 'AUTH-3', 'AUTH-4']);
		await select.selectOption(web);
		await page.waitForFunction(() => document.querySelector('.card[data-id="API-1"]') === null);
		assert.deepEqual(await shown(), ['AUTH-3', 'AUTH-4']);
		await open();
		assert.equal(await page.locator('select.filter-project').inputValue(), web, 'remembered in localStorage');
		assert.deepEqual(await shown(), ['AUTH-3', 'AUTH-4']);
		await page.locator('select.filter-project').selectOption('');
		await page.waitForFunction(() => document.querySelector('.card[data-id="API-1"]') !== null);
	});

	it('says which project hides every card, and shows all projects from there', async () => {
		await page.evaluate(() => localStorage.setItem('baton.board.project', 'github.com/acme/mobile'));
		await open();
		const empty = page.locator('.project-empty');
		await empty.waitFor({ state: 'visible' });
		assert.equal((await empty.textContent())?.trim(), 'No cards in github.com/acme/mobile — show all projects');
		assert.deepEqual(await shown(), []);
		await empty.getByRole('button', { name: 'show all projects' }).click();
		await page.waitForFunction(() => document.querySelectorAll('.board .card[data-id]').length === 3);
		assert.equal(await empty.isHidden(), true);
		assert.equal(await page.evaluate(() => localStorage.getItem('baton.board.project')), '');
	});

	it('shows a scope chip, and "waits on files held by …" until the holder completes', async () => {
		const chip = cardIn(page, 'ready', 'AUTH-4').locator('.flag-scope');
		assert.equal(await chip.textContent(), 'src/auth/login.ts +1');
		assert.equal(await chip.getAttribute('title'), `Scope in ${web}: src/auth/login.ts, docs/**`);
		assert.equal(await cardIn(page, 'inProgress', 'AUTH-3').locator('.flag-scope').textContent(), 'src/auth/**');
		const note = cardIn(page, 'ready', 'AUTH-4').locator('.card-note');
		assert.equal(await note.textContent(), 'waits on files held by AUTH-3 (claude-code-1)');
		assert.match(
			(await cardIn(page, 'ready', 'AUTH-4').getAttribute('aria-label')) ?? '',
			/waits on files held by AUTH-3 \(claude-code-1\)/,
		);
		assert.equal(await cardIn(page, 'ready', 'API-1').locator('.card-note').textContent(), '', 'another project');
		await agent.request('card/complete', { cardId: 'AUTH-3', result: 'Cookies are SameSite=Strict now.' });
		// The row is refreshed by the event or, at the latest, by the board's 1 s clock.
		await page.waitForFunction(
			() => document.querySelector('.column-ready .card[data-id="AUTH-4"] .card-note')?.textContent === '',
			undefined,
			{ timeout: 3000 },
		);
	});
});
