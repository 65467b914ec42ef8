/**
 * UI checks run by vscodeShim.js with Playwright on the very code-server page the suite runs in
 * (TESTING.md selectors): Backlog rows, the status bar item and the board webview, plus the
 * screenshot for docs/. The suite asks for them over HTTP and asserts on what comes back.
 */
import type { FrameLocator, Locator, Page } from 'playwright-core';

export interface UiCheckRequest {
	/** Card titles that must be visible as tree rows. */
	rows: string[];
	/** A card title the board webview must render. */
	boardText?: string;
	/** Where to save a screenshot of the whole window. */
	screenshot?: string;
	/** Drag the side bar's sash to this width first (px), so tree descriptions fit. */
	sidebarWidth?: number;
	/** Tree rows (by label) to expand by clicking their twistie, if collapsed. */
	expand?: string[];
	/** Tree rows (by label) whose expanded state to report. */
	expandedState?: string[];
	/**
	 * Run a command from the palette (F1), type `pick` (an item's label) and choose that item; then, if
	 * `input` is given, wait for the input box whose prompt contains `input.prompt`, type `input.text`
	 * and press Enter.
	 */
	palette?: { command: string; pick: string; input?: { prompt: string; text: string } };
	/** Click the status bar item showing `item`, then choose the quick-pick item `pick` it opens. */
	statusBarPick?: { item: string; pick: string };
	/** Wait (up to 10 s) until the status bar draws an item with this text: the extension's item is
	 * shown in the renderer a moment after the extension host sets it. */
	statusBarItem?: string;
	/** Wait (up to 10 s) until a notification toast with this text shows, for the same reason. */
	notification?: string;
	/** Focus this card on the board and press these keys (before the screenshot). */
	boardKeys?: { cardId: string; keys: string[]; expectColumn: string };
	/** An Explorer row (file name, already revealed) whose decoration to report. */
	explorerFile?: string;
	/**
	 * Side bar views (by header label, e.g. `backlog`) to resize before the screenshot, each to the
	 * given height in px by dragging the sash under it, so every row shows.
	 */
	paneHeights?: Record<string, number>;
}

export interface UiCheckResult {
	/** Which of the requested rows were found. */
	rowsFound: string[];
	statusBarText: string;
	/** The text of every status bar item. */
	statusBarItems: string[];
	boardRendered: boolean;
	/** The board's text, to check that card titles are rendered as text. */
	boardSample: string;
	/** Visible board webviews. */
	webviewFrames: number;
	/** The text of the quick-pick item chosen for `palette` (label, description and detail). */
	pickedItem: string | undefined;
	/** aria-expanded of the rows asked for in expandedState. */
	expanded: Record<string, boolean>;
	/** The card reached expectColumn on the board after boardKeys. */
	boardKeysMoved: boolean | undefined;
	/** The Explorer row's decoration badges as drawn (the label's ::after content) and its label colour. */
	explorerFile: { badge: string; color: string } | undefined;
	/** The text of every notification toast on screen. */
	notifications: string[];
	screenshot: string | undefined;
}

function boardFrame(page: Page): FrameLocator {
	return page
		.locator('iframe.webview.ready[src*="extensionId=baton-dev.baton-mcp"]:visible')
		.first()
		.contentFrame()
		.frameLocator('#active-frame');
}

async function resizeSidebar(page: Page, width: number): Promise<void> {
	const box = await page.locator('.part.sidebar').boundingBox();
	if (!box) {
		return;
	}
	const x = box.x + box.width;
	const y = box.y + box.height / 2;
	await page.mouse.move(x, y);
	await page.mouse.down();
	await page.mouse.move(box.x + width, y, { steps: 8 });
	await page.mouse.up();
}

/** Drags the sash under the side bar view whose header starts with `label` until the view is `height` px tall. */
async function resizePane(page: Page, label: string, height: number): Promise<void> {
	const pane = page
		.locator('.part.sidebar .pane', { has: page.locator('.pane-header', { hasText: new RegExp(`^${label}`, 'i') }) })
		.first();
	const box = await pane.boundingBox();
	if (!box) {
		return;
	}
	const x = box.x + box.width / 2;
	await page.mouse.move(x, box.y + box.height);
	await page.mouse.down();
	await page.mouse.move(x, box.y + height, { steps: 8 });
	await page.mouse.up();
}

/** Names the step that failed, so a timeout says where the UI got stuck. */
async function step<T>(name: string, fn: () => Promise<T>): Promise<T> {
	try {
		return await fn();
	} catch (error) {
		throw new Error(`${name}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
	}
}

/**
 * Opens the command palette and runs `command` from it. F1 is retried: while a webview iframe holds
 * keyboard focus the key can land in the iframe, so each retry first gives the workbench focus back
 * by clicking the status bar's empty middle. The palette can also close again before the command is
 * typed (a CI run's input went hidden right after it opened, and the fill waited 30 s): then it is
 * opened again, up to three times.
 */
async function openCommand(page: Page, command: string): Promise<void> {
	const input = page.locator('.quick-input-widget input');
	await step(`find "${command}" in the palette`, async () => {
		for (let attempt = 1; ; attempt++) {
			await openPalette(page, input);
			try {
				await input.fill(`>${command}`, { timeout: 5_000 });
				await page
					.locator('.quick-input-list .monaco-list-row', { hasText: command })
					.first()
					.waitFor({ timeout: 5_000 });
				break;
			} catch (error) {
				if (attempt === 3) {
					throw error;
				}
				await page.keyboard.press('Escape');
			}
		}
		await page.keyboard.press('Enter');
	});
}

async function openPalette(page: Page, input: Locator): Promise<void> {
	await step('open the command palette', async () => {
		for (let attempt = 1; ; attempt++) {
			await page.keyboard.press('F1');
			try {
				await input.waitFor({ state: 'visible', timeout: 3_000 });
				return;
			} catch (error) {
				if (attempt === 3) {
					throw error;
				}
				await page.keyboard.press('Escape');
				const bar = await page.locator('.part.statusbar').boundingBox();
				if (bar) {
					await page.mouse.click(bar.x + bar.width / 2, bar.y + bar.height / 2);
				}
			}
		}
	});
}

/** What held the focus and what the notifications said: for the log when a quick pick went missing. */
async function focusReport(page: Page): Promise<string> {
	const focused = await page.evaluate(() => {
		const el = document.activeElement;
		const cls = el?.getAttribute('class') ?? '';
		return el ? `${el.tagName.toLowerCase()}${cls === '' ? '' : `.${cls.split(' ').join('.')}`}` : 'none';
	});
	const toasts = await page.locator('.notification-toast').allInnerTexts();
	return `focus on ${focused}, notifications ${JSON.stringify(toasts.map(t => t.replace(/\s+/g, ' ').trim()))}`;
}

/**
 * Opens the command palette, runs `command` and chooses the quick-pick item containing `pick`;
 * returns that item's text. The whole run is retried once when the command's own quick pick never
 * shows or closes before the item can be typed (a CI run once saw it gone, focus taken by a late
 * webview): a dismissed pick does nothing, so running the command again is safe.
 */
/** Clicks a status bar item and chooses an item of the quick pick it opens; returns that item's text. */
async function pickFromStatusBar(page: Page, itemText: string, pick: string): Promise<string> {
	const item = page.locator('.quick-input-list .monaco-list-row', { hasText: pick }).first();
	return step(`click "${itemText}" in the status bar and choose "${pick}"`, async () => {
		await page.locator('.statusbar-item', { hasText: itemText }).first().click();
		await item.waitFor({ state: 'visible', timeout: 8_000 });
		const text = (await item.innerText()).replace(/\s+/g, ' ').trim();
		await item.click();
		await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5_000 });
		return text;
	});
}

async function runFromPalette(
	page: Page,
	command: string,
	pick: string,
	answer?: { prompt: string; text: string },
): Promise<string> {
	const input = page.locator('.quick-input-widget input');
	const item = page.locator('.quick-input-list .monaco-list-row', { hasText: pick }).first();
	let text: string | undefined;
	for (let attempt = 1; text === undefined; attempt++) {
		await openCommand(page, command);
		try {
			text = await step(`find the quick-pick item "${pick}"`, async () => {
				// The command's own quick pick has replaced the palette once the input no longer holds ">command".
				await page.waitForFunction(
					() => !(document.querySelector<HTMLInputElement>('.quick-input-widget input')?.value ?? '>').startsWith('>'),
					undefined,
					{ timeout: 8_000 },
				);
				// Typed as a user would: a long list renders only the rows in view, so the item may not be there
				// until the list is filtered.
				await input.fill(pick, { timeout: 8_000 });
				await item.waitFor({ state: 'visible', timeout: 8_000 });
				return (await item.innerText()).replace(/\s+/g, ' ').trim();
			});
		} catch (error) {
			if (attempt === 2) {
				throw error;
			}
			console.log(
				`ui: ${error instanceof Error ? error.message : String(error)}; ${await focusReport(page)}; running "${command}" again`,
			);
			await page.keyboard.press('Escape');
		}
	}
	await step('choose the quick-pick item', async () => {
		await item.click();
		if (answer === undefined) {
			await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5_000 });
		}
	});
	if (answer !== undefined) {
		await step(`answer the input box "${answer.prompt}"`, async () => {
			await page
				.locator('.quick-input-widget', { hasText: answer.prompt })
				.waitFor({ state: 'visible', timeout: 8_000 });
			await input.fill(answer.text);
			await page.keyboard.press('Enter');
			await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5_000 });
		});
	}
	return text;
}

/**
 * Whether a Backlog tree row showing `title` can be seen within `waitMs`. A tree renders only the rows
 * in view, and the sidebar shares its height between the Backlog, Agents and Board views, so a row low
 * in a short Backlog view is not in the page at all (a CI run once found none of the rows it asked
 * for): after a first wait of at most 2 s, the Backlog view is expanded if collapsed and walked from
 * the top, and walked again after each further wait until `waitMs` is over. (A first wait of the whole
 * 10 s spent 8 s for nothing on each row below the fold, about a minute of each VS Code run.)
 */
async function findBacklogRow(page: Page, title: string, waitMs = 10_000): Promise<boolean> {
	const deadline = Date.now() + waitMs;
	const row = page.locator('.monaco-list-row', { hasText: title }).first();
	const seenWithin = (ms: number): Promise<boolean> =>
		row.waitFor({ state: 'visible', timeout: Math.max(1, ms) }).then(
			() => true,
			() => false, // not rendered yet, or out of view
		);
	if (await seenWithin(Math.min(2_000, waitMs))) {
		return true;
	}
	const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /^backlog/i }) }).first();
	const header = pane.locator('.pane-header').first();
	const wasExpanded = await header.getAttribute('aria-expanded');
	if (wasExpanded === 'false') {
		await header.click();
	}
	const list = pane.locator('.monaco-list').first();
	const rendered = await pane.locator('.monaco-list-row').allInnerTexts();
	console.log(
		`ui: "${title}" not in view; Backlog view expanded=${wasExpanded}, ${rendered.length} rows rendered: ${JSON.stringify(rendered.map(r => r.split('\n')[0]))}`,
	);
	if (!(await list.isVisible())) {
		return false;
	}
	for (;;) {
		if (await walkTo(page, list, row)) {
			return true;
		}
		const left = deadline - Date.now();
		if (left <= 0) {
			break;
		}
		if (await seenWithin(Math.min(2_000, left))) {
			return true;
		}
	}
	const after = await pane
		.locator('.monaco-list-row')
		.evaluateAll(rows => rows.map(r => `${r.getAttribute('aria-expanded') ?? '-'} ${r.textContent.slice(0, 40)}`));
	const focused = await page.evaluate(() => document.activeElement?.className ?? 'none');
	console.log(`ui: "${title}" still not in view after the walk (focus on ${focused}): ${JSON.stringify(after)}`);
	return false;
}

/**
 * Walks the tree from its top with the keyboard, as a user would, until `row` is visible: the list
 * scrolls its focused row into view on every key, where a mouse wheel's scroll depends on where the
 * pointer lands and on the list's smooth-scrolling (the row was sometimes never reached that way).
 */
async function walkTo(page: Page, list: Locator, row: Locator): Promise<boolean> {
	await list.focus();
	await page.keyboard.press('Home');
	for (let i = 0; i < 60; i++) {
		if (await row.isVisible()) {
			return true;
		}
		await page.keyboard.press('ArrowDown');
		await page.waitForTimeout(30);
	}
	return row.isVisible();
}

/**
 * Waits up to 10 s for an element of `selector` showing `text`: what the extension host shows reaches
 * the renderer a moment later. Never throws; the caller reads and asserts what is drawn.
 */
async function drawn(page: Page, selector: string, text: string): Promise<void> {
	await page
		.locator(selector, { hasText: text })
		.first()
		.waitFor({ state: 'visible', timeout: 10_000 })
		.catch(() => undefined);
}

export async function runUiCheck(page: Page, request: UiCheckRequest): Promise<UiCheckResult> {
	if (request.sidebarWidth !== undefined) {
		await resizeSidebar(page, request.sidebarWidth);
	}
	const treeRow = (label: string) =>
		page.locator('.monaco-list-row', { has: page.locator('.label-name', { hasText: label }) }).first();
	for (const label of request.expand ?? []) {
		const row = treeRow(label);
		// The Backlog view may be too short to render it: scrolled to, as a user would. A short first
		// wait: a case expands a group once the tree has drawn.
		await findBacklogRow(page, label, 2_000);
		await row.waitFor({ state: 'visible', timeout: 10_000 });
		const open = page
			.locator('.monaco-list-row[aria-expanded="true"]', { has: page.locator('.label-name', { hasText: label }) })
			.first();
		// A click that lands while the tree redraws the row is lost (a CI run's group stayed shut for 5 s):
		// clicked again while it is still shut, as a user would, up to three times.
		for (let attempt = 1; (await row.getAttribute('aria-expanded')) === 'false'; attempt++) {
			await row.click();
			try {
				await open.waitFor({ timeout: 5_000 });
			} catch (error) {
				if (attempt === 3) {
					throw error;
				}
				console.log(`ui: "${label}" did not open on click ${attempt}; clicking again`);
			}
		}
	}
	const expanded: Record<string, boolean> = {};
	for (const label of request.expandedState ?? []) {
		expanded[label] = (await treeRow(label).getAttribute('aria-expanded', { timeout: 10_000 })) === 'true';
	}
	let pickedItem: string | undefined;
	if (request.palette !== undefined) {
		pickedItem = await runFromPalette(page, request.palette.command, request.palette.pick, request.palette.input);
	}
	if (request.statusBarPick !== undefined) {
		pickedItem = await pickFromStatusBar(page, request.statusBarPick.item, request.statusBarPick.pick);
	}
	const rowsFound: string[] = [];
	for (const title of request.rows) {
		if (await findBacklogRow(page, title)) {
			rowsFound.push(title);
		}
	}
	const status = page.locator('.statusbar-item', { hasText: /agents?|Baton/ }).first();
	await status.waitFor({ state: 'visible', timeout: 10_000 });
	const statusBarText = (await status.innerText()).trim();
	if (request.statusBarItem !== undefined) {
		await drawn(page, '.statusbar-item', request.statusBarItem);
	}
	const statusBarItems = (await page.locator('.statusbar-item').allInnerTexts())
		.map(t => t.trim())
		.filter(t => t !== '');

	let boardRendered = false;
	let boardSample = '';
	const webviewFrames = await page
		.locator('iframe.webview.ready[src*="extensionId=baton-dev.baton-mcp"]:visible')
		.count();
	if (request.boardText !== undefined) {
		const frame = boardFrame(page);
		try {
			await frame.getByText(request.boardText, { exact: false }).first().waitFor({ state: 'visible', timeout: 15_000 });
			boardRendered = true;
		} catch {
			// Reported below.
		}
		boardSample = (
			await frame
				.locator('body')
				.innerText({ timeout: 5_000 })
				.catch(() => '')
		).slice(0, 2_000);
	}
	let boardKeysMoved: boolean | undefined;
	if (request.boardKeys !== undefined) {
		const { cardId, keys, expectColumn } = request.boardKeys;
		const frame = boardFrame(page);
		const card = frame.locator(`.card[data-id="${cardId}"]`);
		await card.focus({ timeout: 10_000 });
		for (const key of keys) {
			await card.press(key);
		}
		try {
			await frame.locator(`.column-${expectColumn} .card[data-id="${cardId}"]`).waitFor({ timeout: 5_000 });
			boardKeysMoved = true;
		} catch {
			boardKeysMoved = false;
		}
	}
	let explorerFile: UiCheckResult['explorerFile'];
	if (request.explorerFile !== undefined) {
		const row = page
			.locator('.explorer-folders-view .monaco-list-row', {
				has: page.locator('.label-name', { hasText: request.explorerFile }),
			})
			.first();
		await row.waitFor({ state: 'visible', timeout: 10_000 });
		// Decorations are CSS: the badge is the label's ::after content, the colour the label's.
		explorerFile = await row
			.locator('.monaco-icon-label')
			.first()
			.evaluate(label => ({
				badge: getComputedStyle(label, '::after').content,
				color: getComputedStyle(label.querySelector('.label-name') ?? label).color,
			}));
	}
	for (const [label, height] of Object.entries(request.paneHeights ?? {})) {
		await resizePane(page, label, height);
	}
	if (request.paneHeights !== undefined) {
		// Off the sash, so it is not drawn highlighted.
		await page.mouse.move(0, 0);
	}
	if (request.notification !== undefined) {
		await drawn(page, '.notification-toast', request.notification);
	}
	const notifications = (await page.locator('.notification-toast').allInnerTexts()).map(t => t.trim());
	let screenshot: string | undefined;
	if (request.screenshot !== undefined) {
		// Let the last tree refresh and webview paint settle.
		await page.waitForTimeout(500);
		await page.screenshot({ path: request.screenshot });
		screenshot = request.screenshot;
	}
	return {
		rowsFound,
		statusBarText,
		statusBarItems,
		boardRendered,
		boardSample,
		webviewFrames,
		pickedItem,
		expanded,
		boardKeysMoved,
		explorerFile,
		notifications,
		screenshot,
	};
}
