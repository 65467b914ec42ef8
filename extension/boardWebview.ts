/**
 * Fills a webview (the sidebar view or the editor tab) with the board: options limited to
 * dist/webview, the page from core/formats/boardHtml.ts with a fresh nonce and `connect-src 'none'` (frames go
 * through postMessage), and a WebviewRelay to the hub. When `baton.dataDir` switches to another
 * backlog the page is loaded afresh on a new connection: a board keeps its cards and resumes by seq,
 * which only means something on the backlog it loaded them from.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { boardPageHtml } from '../core/formats/boardHtml';
import type { ViewMessage } from '../core/protocol';
import type { HubConnection } from './hubConnection';
import type { WebviewRelay } from './webviewRelay';
import type { WorkspaceProjects } from './workspaceProjects';

export interface BoardHost {
	extensionUri: vscode.Uri;
	hub: HubConnection;
	log: vscode.LogOutputChannel;
	/** The workspace's projects: the board starts filtered to them unless the user chose All projects. */
	projects: WorkspaceProjects;
	/** Handles view/revealInTree and other messages meant for the extension. */
	onViewMessage(message: ViewMessage): void;
}

/** The board's side of a webview: open a card, and dispose of the relay with the webview. */
export interface BoardConnection {
	/** Opens the card's detail pane, at once or as soon as the board has loaded (view/ready). */
	openCard(cardId: string): void;
	dispose(): void;
}

/**
 * Sets the page and connects it to the hub. The relay (and zod with it) is loaded on demand; the
 * webview's messages are subscribed at once and buffered until it is there, so none is lost.
 */
export function setUpBoardWebview(webview: vscode.Webview, host: BoardHost): BoardConnection {
	const root = vscode.Uri.joinPath(host.extensionUri, 'dist', 'webview');
	webview.options = { enableScripts: true, localResourceRoots: [root] };
	let relay: WebviewRelay | undefined;
	let disposed = false;
	const early: unknown[] = [];
	// A card asked for before the board said view/ready would be posted to a page that is not listening.
	let boardReady = false;
	let cardToOpen: string | undefined;
	const openPending = (): void => {
		if (relay && boardReady && cardToOpen !== undefined) {
			relay.openCard(cardToOpen);
			cardToOpen = undefined;
		}
	};
	const postProjects = (): void => {
		if (!disposed && boardReady) {
			const message: ViewMessage = {
				type: 'view/projects',
				workspace: host.projects.projects,
				showAll: host.projects.showAll,
			};
			void webview.postMessage(message);
		}
	};
	const projectsChanged = host.projects.onDidChange(postProjects);
	const subscription = webview.onDidReceiveMessage((message: unknown) => {
		if (relay) {
			relay.receive(message);
		} else {
			early.push(message);
		}
	});
	void import('./webviewRelay').then(({ WebviewRelay }) => {
		if (disposed) {
			return;
		}
		relay = new WebviewRelay(webview, host.hub, host.log, m => {
			if (m.type === 'view/ready') {
				boardReady = true;
				postProjects();
				openPending();
			}
			host.onViewMessage(m);
		});
		for (const message of early.splice(0)) {
			relay.receive(message);
		}
		openPending();
	});
	const setPage = () => {
		webview.html = boardPageHtml({
			nonce: randomBytes(24).toString('base64'),
			scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(root, 'board.js')).toString(),
			styleUri: webview.asWebviewUri(vscode.Uri.joinPath(root, 'board.css')).toString(),
			cspSource: webview.cspSource,
			connectSrc: "'none'",
			host: 'vscode',
		});
	};
	let dataDir = host.hub.dataDir;
	const switched = host.hub.onDidChangeState(() => {
		if (host.hub.dataDir !== dataDir) {
			dataDir = host.hub.dataDir;
			boardReady = false;
			relay?.reconnect();
			setPage();
		}
	});
	setPage();
	return {
		openCard: cardId => {
			cardToOpen = cardId;
			openPending();
		},
		dispose: () => {
			disposed = true;
			subscription.dispose();
			switched.dispose();
			projectsChanged.dispose();
			relay?.dispose();
		},
	};
}
