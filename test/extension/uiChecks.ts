/**
 * UI checks run by vscodeShim.js with Playwright on the very code-server page the suite runs in
 * (TESTING.md selectors): Backlog rows, the status bar item and the board webview, plus the
 * screenshot for docs/. The suite asks for them over HTTP and asserts on what comes back.
 */
import type { FrameLocator, Page } from 'playwright-core';

import { findBacklogRow, pickFromStatusBar, runFromPalette, thrice } from './uiSteps';

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
		await thrice(
			async () => {
				if ((await row.getAttribute('aria-expanded')) === 'false') {
					await row.click();
					await open.waitFor({ timeout: 5_000 });
				}
			},
			failed => console.log(`ui: "${label}" did not open on click ${failed}; clicking again`),
		);
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
