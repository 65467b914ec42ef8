/**
 * The board as a full-width editor tab (Open Board in Editor): one panel, revived after a reload by
 * a serializer so the tab survives a window restart.
 */
import * as vscode from 'vscode';
import { type BoardConnection, type BoardHost, setUpBoardWebview } from './boardWebview';

export const boardPanelType = 'baton.boardEditor';

export class BoardPanel implements vscode.Disposable {
	private panel: vscode.WebviewPanel | undefined;
	private relay: BoardConnection | undefined;
	private pendingCard: string | undefined;
	private readonly serializer: vscode.Disposable;

	constructor(private readonly host: BoardHost) {
		this.serializer = vscode.window.registerWebviewPanelSerializer(boardPanelType, {
			deserializeWebviewPanel: panel => {
				this.adopt(panel);
				return Promise.resolve();
			},
		});
	}

	get isOpen(): boolean {
		return this.panel !== undefined;
	}

	show(cardId?: string): void {
		if (this.panel) {
			this.panel.reveal(vscode.ViewColumn.Active);
			if (cardId !== undefined) {
				this.relay?.openCard(cardId);
			}
			return;
		}
		this.pendingCard = cardId;
		this.adopt(
			vscode.window.createWebviewPanel(boardPanelType, 'Baton Board', vscode.ViewColumn.Active, {
				enableScripts: true,
				retainContextWhenHidden: true,
			}),
		);
	}

	dispose(): void {
		this.serializer.dispose();
		this.panel?.dispose();
	}

	private adopt(panel: vscode.WebviewPanel): void {
		this.panel = panel;
		panel.iconPath = vscode.Uri.joinPath(this.host.extensionUri, 'media', 'baton.svg');
		this.relay = setUpBoardWebview(panel.webview, this.host);
		if (this.pendingCard !== undefined) {
			this.relay.openCard(this.pendingCard);
			this.pendingCard = undefined;
		}
		panel.onDidDispose(() => {
			this.relay?.dispose();
			this.relay = undefined;
			this.panel = undefined;
		});
	}
}
