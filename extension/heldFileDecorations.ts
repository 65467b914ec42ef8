/**
 * Files inside a live claim's scope, as the editor shows them: a FileDecorationProvider
 * (a badge, the `baton.heldFileForeground` colour, propagated to the folders above, and the tooltip
 * "Held by claude-code-1 for AUTH-3 — Session cookie hardening" in the Explorer and on editor tabs)
 * and the warning shown once per card and claim epoch when the user starts editing a file another
 * agent holds, with Open Card and Message Agent. Follows the connection's card events and the
 * workspace's projects; the model (heldFiles.ts) is rebuilt only when a live scope changed. Sends no
 * request itself: Message Agent is the existing command (card/comment).
 */
import * as vscode from 'vscode';
import { visibleText } from '../core/visibleText';
import type { Card } from '../core/protocol';
import { commandIds } from './commands';
import { HeldFiles } from './heldFiles';
import type { HubConnection } from './hubConnection';
import type { WorkspaceProjects } from './workspaceProjects';

export const heldFileColor = 'baton.heldFileForeground';

export class HeldFileDecorations implements vscode.FileDecorationProvider, vscode.Disposable {
	private model: HeldFiles;
	private readonly emitter = new vscode.EventEmitter<undefined>();
	private readonly disposables: vscode.Disposable[] = [];
	/** Cards (id@epoch) the user was already warned about: once per claim. */
	private readonly warned = new Set<string>();
	readonly onDidChangeFileDecorations = this.emitter.event;
	/** When the decorations last changed (ms since epoch): the tests measure event → decoration with it. */
	changedAt = 0;

	constructor(
		private readonly hub: HubConnection,
		private readonly projects: WorkspaceProjects,
	) {
		this.model = new HeldFiles([], []);
		this.disposables.push(
			hub.onDidChangeCards(() => this.rebuild()),
			projects.onDidChange(() => this.rebuild(true)),
			vscode.window.registerFileDecorationProvider(this),
			vscode.workspace.onDidChangeTextDocument(e => {
				if (e.contentChanges.length > 0) {
					this.warnOnEdit(e.document.uri);
				}
			}),
		);
		this.rebuild(true);
	}

	/** The held-files model as decorations use it now (the tests and the bench read it). */
	get held(): HeldFiles {
		return this.model;
	}

	provideFileDecoration(uri: vscode.Uri): vscode.FileDecoration | undefined {
		if (uri.scheme !== 'file') {
			return undefined;
		}
		const d = this.model.decorationOf(uri.fsPath);
		if (d === undefined) {
			return undefined;
		}
		const decoration = new vscode.FileDecoration(d.badge, d.tooltip, new vscode.ThemeColor(heldFileColor));
		// The colour climbs to the folders above a held file the Explorer has shown (the badge does not).
		decoration.propagate = true;
		return decoration;
	}

	dispose(): void {
		for (const d of this.disposables) {
			d.dispose();
		}
		this.emitter.dispose();
	}

	/** Rebuilds the model; fires the change (synchronously, well within the 1 s a decoration may take) only if a live scope changed. */
	private rebuild(rootsChanged = false): void {
		const next = new HeldFiles(this.hub.cards.values(), this.projects.roots);
		if (!rootsChanged && next.signature === this.model.signature) {
			return;
		}
		this.model = next;
		this.changedAt = Date.now();
		this.emitter.fire(undefined);
	}

	private warnOnEdit(uri: vscode.Uri): void {
		if (uri.scheme !== 'file') {
			return;
		}
		for (const card of this.model.holdersOf(uri.fsPath)) {
			const key = `${card.id}@${card.claimEpoch}`;
			if (card.claimOwner === this.hub.me || this.warned.has(key)) {
				continue;
			}
			this.warned.add(key);
			void this.warn(uri, card);
		}
	}

	private async warn(uri: vscode.Uri, card: Card): Promise<void> {
		const file = vscode.workspace.asRelativePath(uri);
		const choice = await vscode.window.showWarningMessage(
			visibleText(
				`${file} is held by ${card.claimOwner ?? 'another agent'} for ${card.id} — ${card.title}. Your edits may collide with its work.`,
			),
			'Open Card',
			'Message Agent',
		);
		if (choice === 'Open Card') {
			await vscode.commands.executeCommand(commandIds.showCardDetail, card.id);
		} else if (choice === 'Message Agent') {
			await vscode.commands.executeCommand(commandIds.messageAgent, card.id);
		}
	}
}
