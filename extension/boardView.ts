/** The Board webview view in the Baton sidebar (issue item 2). */
import * as vscode from 'vscode';
import { type BoardConnection, type BoardHost, setUpBoardWebview } from './boardWebview';

export class BoardViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
	private view: vscode.WebviewView | undefined;
	private relay: BoardConnection | undefined;
	/** A card to open once the view exists (Open on Board before the view was resolved). */
	private pendingCard: string | undefined;

	constructor(private readonly host: BoardHost) {}

	resolveWebviewView(view: vscode.WebviewView): void {
		this.view = view;
		this.relay?.dispose();
		this.relay = setUpBoardWebview(view.webview, this.host);
		if (this.pendingCard !== undefined) {
			this.relay.openCard(this.pendingCard);
			this.pendingCard = undefined;
		}
		view.onDidDispose(() => {
			this.relay?.dispose();
			this.relay = undefined;
			this.view = undefined;
		});
	}

	/** Focuses the view (creating it if needed) and opens the card's detail pane. */
	async reveal(cardId?: string): Promise<void> {
		if (this.view && this.relay) {
			this.view.show(true);
			if (cardId !== undefined) {
				this.relay.openCard(cardId);
			}
			return;
		}
		this.pendingCard = cardId;
		await vscode.commands.executeCommand('baton.board.focus');
	}

	dispose(): void {
		this.relay?.dispose();
	}
}
