/**
 * What a new user meets on the board, in headless Chromium against a real hub: before
 * its socket connects the board says it is connecting (no column claims 0 cards, the choices are
 * disabled, not blank), a loaded empty backlog says how to make cards, a lost socket turns the
 * header's agent count into "offline", a done card's result is rendered markdown with its raw HTML
 * inert, no status chip or lease is cut at 1440 px with the detail pane open nor in a sidebar-wide
 * window, and the New card form sends a project and a scope (the hub's refusal of a bad glob shows
 * in the form, keeping the text). The socket is held or cut with Playwright's WebSocket routing: the
 * board's own socket, to the real hub, just later (or not at all for a while).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import type { Page, WebSocketRoute } from 'playwright-core';

import { waitFor } from '../helpers/hub';
import { BoardFixture } from './boardFixture';
import { type PageWatch, watch, watchScript } from './boardPage';
import { seedRealisticBoard } from './seed';

const project = 'github.com/acme/web';
const hostileResult = [
	'## Summary',
	'**Shipped** the `login` fix.',
	'',
	'- first <script>window.__pwned = 1</script>',
	'- second <img src=x onerror="window.__pwned = 2">',
].join('\n');

/** The board's socket under the test's control: held until released, cut and refused while `down`. */
class SocketGate {
	private release: () => void = () => undefined;
	private held: Promise<void> = Promise.resolve();
	private down = false;
	private readonly open = new Set<WebSocketRoute>();

	hold(): void {
		this.held = new Promise(resolve => (this.release = resolve));
	}

	letThrough(): void {
		this.release();
	}

	/** Closes the board's socket and refuses its reconnects until restore(). */
	async cut(): Promise<void> {
		this.down = true;
		for (const ws of this.open) {
			await ws.close({ code: 1001, reason: 'test: network lost' });
		}
		this.open.clear();
	}

	restore(): void {
		this.down = false;
	}

	async attach(page: Page): Promise<void> {
		await page.routeWebSocket(/\/ws$/, async ws => {
			await this.held;
			if (this.down) {
				await ws.close({ code: 1001, reason: 'test: network lost' });
				return;
			}
			ws.connectToServer();
			this.open.add(ws);
		});
	}
}

describe('board: first use (Chromium, real hub)', () => {
	let board: BoardFixture;
	let page: Page;
	let w: PageWatch;
	const gate = new SocketGate();
	const summary = (): Promise<string> => page.locator('.toolbar .summary').innerText();

	before(async () => {
		board = await BoardFixture.start();
		const context = await board.newContext();
		await context.addInitScript(watchScript);
		page = await context.newPage();
		w = watch(page);
		await gate.attach(page);
	});

	after(() => board.stop());

	it('says it is connecting until the first cards arrive, then that an empty backlog is empty', async () => {
		gate.hold();
		const { url } = await board.admin.request('hub/boardTicket', {});
		await page.goto(url);
		await page.locator('.column-ready .column-skeleton-text').waitFor({ state: 'visible' });
		assert.equal(await page.locator('.column-ready .column-skeleton-text').innerText(), 'Connecting…');
		const counts = await page.locator('.column-count').allInnerTexts();
		assert.deepEqual(counts, ['…', '…', '…', '…', '…'], 'no column claims 0 cards before it knows');
		assert.equal(await page.locator('.column-empty:visible').count(), 0, 'no "Nothing ready" yet');
		assert.equal(await page.locator('.column[aria-busy="true"]').count(), 5);
		for (const control of ['select.filter-phase', '.column-blocked select.column-filter', '.toolbar .btn-primary']) {
			assert.equal(await page.locator(control).isDisabled(), true, `${control} is disabled while connecting`);
		}
		assert.equal(await page.locator('select.filter-phase').inputValue(), '', 'the phase choice says All phases');
		assert.equal(await page.locator('select.filter-phase option').first().innerText(), 'All phases');
		assert.equal(await summary(), 'Connecting…');
		assert.equal(await page.locator('.board-empty').isVisible(), false);

		gate.letThrough();
		await page.waitForSelector('body[data-ready="true"]', { timeout: 15_000 });
		assert.deepEqual(await page.locator('.column-count').allInnerTexts(), ['0', '0', '0', '0', '0']);
		assert.equal(await page.locator('.column-skeleton:visible').count(), 0);
		assert.equal(await page.locator('select.filter-phase').isDisabled(), false);
		await page.locator('.board-empty').waitFor({ state: 'visible' });
		assert.match(await page.locator('.board-empty').innerText(), /The backlog is empty[\s\S]*baton create/);
		assert.match(await summary(), /^0 cards · \d+ of \d+ agents alive$/);
	});

	it('says offline in the header while the socket is lost, and the counts again once it is back', async () => {
		await waitFor(async () => (await summary()).includes('agents alive'), 10_000, 'the agent count');
		await gate.cut();
		await waitFor(async () => (await summary()) === 'Offline · reconnecting…', 10_000, 'the offline header');
		assert.match(await page.locator('.banner-connection').innerText(), /Offline/);
		// The clock's refresh (every second) must not bring the stale count back.
		await page.waitForTimeout(1_200);
		assert.equal(await summary(), 'Offline · reconnecting…');
		gate.restore();
		await waitFor(async () => /^0 cards · \d+ of \d+ agents alive$/.test(await summary()), 20_000, 'counts again');
	});

	it('renders a done card’s result as markdown, its raw HTML as inert text', async () => {
		const seeded = await seedRealisticBoard(board.dataDir, board.admin);
		const agent = await board.agent('claude-code-7');
		await board.admin.request('card/create', {
			cards: [
				{ id: 'AUTH-1', title: 'Refactor the session store', project, scope: ['src/auth/**'] },
				{ id: 'AUTH-2', title: 'Rotate the signing keys', project, scope: ['src/auth/keys.ts', 'docs/**'] },
				{ id: 'DONE-9', title: 'Ship the login fix' },
			],
		});
		await agent.request('card/claim', { cardId: 'AUTH-1', ttlSeconds: 300 });
		const { lease } = await agent.request('card/claim', { cardId: 'DONE-9' });
		await agent.request('card/complete', { cardId: 'DONE-9', epoch: lease?.epoch, result: hostileResult });
		await seeded.close();
		const result = page.locator('.column-done .card[data-id="DONE-9"] .card-result');
		await result.waitFor({ state: 'visible', timeout: 10_000 });
		assert.equal(await result.locator('strong').innerText(), 'Shipped');
		assert.equal(await result.locator('code').innerText(), 'login');
		assert.equal(await result.locator('h2').innerText(), 'Summary');
		assert.equal(await result.locator('script, img, a, [onerror]').count(), 0, 'nothing active in the card');
		const text = await result.evaluate(e => e.textContent);
		assert.ok(text.includes('<script>window.__pwned = 1</script>'), 'raw HTML shows as text');
		assert.ok(!text.includes('**'), 'no raw markdown left');
		const label = await page.locator('.column-done .card[data-id="DONE-9"]').getAttribute('aria-label');
		assert.match(label ?? '', /result: Summary Shipped the login fix\. first <script>/);
		// The detail pane: the Result section in full, the history's completion on one line, both rendered.
		await page.locator('.column-done .card[data-id="DONE-9"]').click();
		const history = page.locator('.detail .history-result');
		await history.waitFor({ state: 'visible', timeout: 10_000 });
		assert.equal(await history.locator('strong').innerText(), 'Shipped');
		assert.equal(await page.locator('.detail .detail-result strong').innerText(), 'Shipped');
		assert.equal(await page.locator('.detail').locator('script, img, [onerror]').count(), 0);
		await page.keyboard.press('Escape');
		assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
		assert.deepEqual(
			await page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations),
			[],
		);
		assert.deepEqual(w.errors, []);
	});

	/**
	 * Status chips, counts and leases whose text is cut (scrollWidth > clientWidth) or overflows its
	 * card, and titles squeezed by the card's other lines.
	 */
	const clipped = (): Promise<string[]> =>
		page.evaluate(() => {
			const out: string[] = [];
			const chips = document.querySelectorAll<HTMLElement>(
				'.card .flag:not(.flag-scope), .card .card-prio, .card .card-id, .card .card-lease, .column-count',
			);
			for (const chip of chips) {
				const card = chip.closest<HTMLElement>('.card');
				const box = chip.getBoundingClientRect();
				const cardBox = card?.getBoundingClientRect();
				const outside = cardBox !== undefined && (box.right > cardBox.right + 0.5 || box.bottom > cardBox.bottom + 0.5);
				if (chip.offsetParent !== null && (chip.scrollWidth > chip.clientWidth || outside)) {
					out.push(`${card?.dataset.id ?? 'column'}: ${chip.className} "${chip.textContent}"`);
				}
			}
			// A title squeezed below the lines its max-height allows: the card's other lines took its room.
			for (const title of document.querySelectorAll<HTMLElement>('.card .card-title')) {
				const room = Math.min(title.scrollHeight, parseFloat(getComputedStyle(title).maxHeight));
				if (title.offsetParent !== null && title.clientHeight + 0.5 < room) {
					out.push(`${title.closest<HTMLElement>('.card')?.dataset.id ?? 'column'}: title "${title.textContent}"`);
				}
			}
			return out;
		});

	it('cuts no status chip or lease at 1440 px with the detail open, nor in a sidebar-wide window', async () => {
		await page.locator('.card[data-id="WEB-10"]').waitFor();
		await page.locator('.card[data-id="WEB-10"]').click();
		await page.locator('.detail:not([hidden])').waitFor();
		await waitFor(async () => (await page.locator('.column--narrow').count()) === 5, 5_000, 'narrow columns');
		assert.ok((await page.locator('.card .flag').count()) >= 5, 'the board shows flags to check');
		for (const id of ['WEB-10', 'AUTH-2', 'API-3', 'AUTH-1']) {
			assert.equal(await page.locator(`.card[data-id="${id}"]`).count(), 1, `${id} is rendered`);
		}
		assert.deepEqual(await clipped(), [], 'at 1440×900 with the detail pane open');
		await page.keyboard.press('Escape');
		assert.deepEqual(await clipped(), [], 'at 1440×900');
		await page.setViewportSize({ width: 360, height: 800 });
		await page.locator('.card[data-id="WEB-10"]').scrollIntoViewIfNeeded();
		assert.deepEqual(await clipped(), [], 'at 360 px, a VS Code sidebar');
		await page.setViewportSize({ width: 1440, height: 900 });
	});

	it('creates a card with a project and a scope from the keyboard, showing the hub’s refusal of a bad glob', async () => {
		await page.locator('.board').focus();
		await page.keyboard.press('n');
		const dialog = page.locator('dialog[open]');
		await dialog.waitFor();
		await page.keyboard.type('Log in with passkeys');
		// Title → Phase → Priority → Review → Project → Scope, by Tab alone.
		for (let i = 0; i < 4; i++) {
			await page.keyboard.press('Tab');
		}
		assert.equal(await page.evaluate(() => (document.activeElement as HTMLInputElement).name), 'project');
		const offered = await dialog
			.locator('input[name="project"]')
			.evaluate(i => [...((i as HTMLInputElement).list?.options ?? [])].map(o => o.value));
		assert.ok(offered.includes(project), `the known project is offered: ${offered.join(', ')}`);
		await page.keyboard.type(project);
		await page.keyboard.press('Tab');
		assert.equal(await page.evaluate(() => (document.activeElement as HTMLTextAreaElement).name), 'scope');
		await page.keyboard.type('src/passkeys/**\n../secrets/**');
		await dialog.locator('button[type="submit"]').click();
		const problem = dialog.locator('.dialog-problem');
		await problem.waitFor({ state: 'visible' });
		assert.match(await problem.innerText(), /Scope entry "\.\.\/secrets\/\*\*" leaves the project root/);
		assert.equal(await dialog.locator('textarea[name="scope"]').inputValue(), 'src/passkeys/**\n../secrets/**');
		await dialog.locator('textarea[name="scope"]').fill('src/passkeys/**\nlock:db-migrations');
		await dialog.locator('button[type="submit"]').click();
		await dialog.waitFor({ state: 'detached' });
		const { cards } = await board.admin.request('card/list', { text: 'passkeys' });
		const card = cards.find(c => c.title === 'Log in with passkeys');
		assert.ok(card, 'the card reached the hub');
		assert.equal(card.project, project);
		assert.deepEqual(card.scope, ['src/passkeys/**', 'lock:db-migrations']);
		await page.locator(`.detail-id:text("${card.id}")`).waitFor();
		assert.deepEqual(w.errors, []);
	});
});
