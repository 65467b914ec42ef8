/**
 * The open workspace's projects and the "All projects" switch: each workspace folder's
 * git repository (core/client/gitRepo.ts: its root and project id; a folder outside git has none) and
 * whether the user asked to see every project, remembered in the workspace state. The tree, the
 * status bars, the board and the file decorations read it and follow its change event. Decides
 * nothing about cards beyond the filter (heldFiles.ts `inProjects`); never writes to the backlog.
 */
import * as vscode from 'vscode';
import { findGitRepo } from '../core/client/gitRepo';
import type { Card } from '../core/protocol';
import { type ProjectRoot, inProjects } from './heldFiles';

const showAllKey = 'baton.showAllProjects';

export class WorkspaceProjects implements vscode.Disposable {
	private rootList: ProjectRoot[] = [];
	private showAllValue: boolean;
	private readonly emitter = new vscode.EventEmitter<void>();
	private readonly disposables: vscode.Disposable[] = [];
	private scan: Promise<void> = Promise.resolve();
	/** The filter changed: projects found, folders added, or the switch flipped. */
	readonly onDidChange = this.emitter.event;

	constructor(private readonly state: vscode.Memento) {
		this.showAllValue = state.get<boolean>(showAllKey, false);
		this.disposables.push(vscode.workspace.onDidChangeWorkspaceFolders(() => void this.refresh()));
		this.setContext();
	}

	/** Folders scopes are relative to: each workspace folder's repository root, or the folder itself. */
	get roots(): readonly ProjectRoot[] {
		return this.rootList;
	}

	/** The workspace's project ids, each once (empty: no folder is in a git repository). */
	get projects(): string[] {
		return [...new Set(this.rootList.map(r => r.project).filter((p): p is string => p !== undefined))];
	}

	get showAll(): boolean {
		return this.showAllValue;
	}

	/** The projects the faces filter by, or undefined when they show everything. */
	get filter(): string[] | undefined {
		const projects = this.projects;
		return this.showAllValue || projects.length === 0 ? undefined : projects;
	}

	/** "github.com/acme/web" (or "a, b"), or undefined when every project shows. */
	get label(): string | undefined {
		return this.filter?.join(', ');
	}

	/** Whether a card shows under the current filter (cards without a project always do). */
	includes(card: Pick<Card, 'project'>): boolean {
		return inProjects(card, this.filter);
	}

	/** Resolves once the first scan of the workspace folders is done. */
	get ready(): Promise<void> {
		return this.scan;
	}

	/** Asks git again about every workspace folder (a folder became a repository, its remote changed). */
	refresh(): Promise<void> {
		this.scan = this.scan.then(async () => {
			const folders = vscode.workspace.workspaceFolders ?? [];
			const found = await Promise.all(
				folders.map(async (f): Promise<ProjectRoot> => {
					const repo = await findGitRepo(f.uri.fsPath);
					return repo ?? { root: f.uri.fsPath, project: undefined };
				}),
			);
			const unique = [...new Map(found.map(r => [r.root, r])).values()];
			const before = JSON.stringify(this.rootList);
			this.rootList = unique;
			if (JSON.stringify(unique) !== before) {
				this.setContext();
				this.emitter.fire();
			}
		});
		return this.scan;
	}

	/** Flips the switch: every project (true) or the workspace's (false); remembered per workspace. */
	async setShowAll(showAll: boolean): Promise<void> {
		if (showAll === this.showAllValue) {
			return;
		}
		this.showAllValue = showAll;
		await this.state.update(showAllKey, showAll);
		this.setContext();
		this.emitter.fire();
	}

	dispose(): void {
		for (const d of this.disposables) {
			d.dispose();
		}
		this.emitter.dispose();
	}

	private setContext(): void {
		void vscode.commands.executeCommand('setContext', 'baton.allProjects', this.showAllValue);
		void vscode.commands.executeCommand('setContext', 'baton.hasWorkspaceProject', this.projects.length > 0);
	}
}
