/**
 * Open Changes: shows the diff of a commit or branch a card's result names, through the
 * built-in git extension's API, for the workspace's repository, in VS Code's multi-file changes
 * editor (one diff editor per file when that is missing). Every way it cannot (no git extension, git
 * disabled, no repository, an unknown commit or branch) is a BatonError with a sentence saying so;
 * it never runs git itself and never changes the repository (no fetch, no checkout).
 */
import * as vscode from 'vscode';
import { BatonError } from '../core/errors';
import { type ChangeRef, refLabel } from './changeRefs';

/** The slice of the git extension's API (extensions/git/src/api/git.d.ts, version 1) used here. */
interface GitChange {
	readonly uri: vscode.Uri;
	readonly originalUri: vscode.Uri;
	/** git.d.ts `Status`: 1 INDEX_ADDED, 2 INDEX_DELETED, 6 DELETED, 7 UNTRACKED, … */
	readonly status: number;
}
interface GitRepository {
	readonly rootUri: vscode.Uri;
	getCommit(ref: string): Promise<{ hash: string; parents: string[] }>;
	getMergeBase(ref1: string, ref2: string): Promise<string | undefined>;
	/** `git diff ref1...ref2`: the changes of ref2 since its merge base with ref1. */
	diffBetween(ref1: string, ref2: string): Promise<GitChange[]>;
}
interface GitApi {
	readonly state?: 'uninitialized' | 'initialized';
	readonly onDidChangeState?: vscode.Event<string>;
	readonly repositories: GitRepository[];
	getRepository(uri: vscode.Uri): GitRepository | null;
	openRepository?(root: vscode.Uri): Promise<GitRepository | null>;
	toGitUri(uri: vscode.Uri, ref: string): vscode.Uri;
}
interface GitExtension {
	readonly enabled: boolean;
	getAPI(version: 1): GitApi;
}

export interface OpenedChanges {
	title: string;
	/** Workspace-relative paths of the files shown. */
	files: string[];
}

const added = new Set([1, 7]);
const deleted = new Set([2, 6]);

function unavailable(message: string): BatonError {
	return new BatonError('unavailable', message);
}

async function gitApi(): Promise<GitApi> {
	const ext = vscode.extensions.getExtension<GitExtension | undefined>('vscode.git');
	if (!ext) {
		throw unavailable('The built-in Git extension is not installed or is disabled, so Baton cannot show the changes.');
	}
	// A git extension whose activation failed is active with no exports.
	const exports = ext.isActive ? ext.exports : await ext.activate();
	if (exports === undefined) {
		throw unavailable('The built-in Git extension did not start (see its log), so Baton cannot show the changes.');
	}
	if (!exports.enabled) {
		throw unavailable('Git is disabled in VS Code (setting git.enabled), so Baton cannot show the changes.');
	}
	const api = exports.getAPI(1);
	if (api.state === 'uninitialized' && api.onDidChangeState) {
		const changed = api.onDidChangeState;
		await new Promise<void>(resolve => {
			const done = () => {
				sub.dispose();
				clearTimeout(timer);
				resolve();
			};
			const sub = changed(done);
			const timer = setTimeout(done, 5_000);
		});
	}
	return api;
}

/** The repository of the (first) workspace folder, opened if git has not found it by itself. */
async function workspaceRepository(api: GitApi): Promise<GitRepository> {
	const folder = vscode.workspace.workspaceFolders?.[0];
	if (!folder) {
		throw unavailable('Open the repository’s folder in VS Code to see a card’s changes.');
	}
	const repo = api.getRepository(folder.uri) ?? (await api.openRepository?.(folder.uri)) ?? api.repositories[0] ?? null;
	if (!repo) {
		throw unavailable(`${folder.uri.fsPath} is not a git repository, so its changes cannot be shown.`);
	}
	return repo;
}

/** Left and right refs of the diff, and the changed files, for `ref` in `repo`. */
async function changesOf(
	repo: GitRepository,
	ref: ChangeRef,
): Promise<{ left: string; right: string; changes: GitChange[] }> {
	const where = repo.rootUri.fsPath;
	if (ref.kind === 'commit') {
		let commit;
		try {
			commit = await repo.getCommit(ref.sha);
		} catch {
			throw new BatonError(
				'not_found',
				`Commit ${ref.sha} is not in the repository at ${where}. Fetch it, or check the card's result.`,
			);
		}
		const parent = commit.parents[0];
		if (parent === undefined) {
			throw new BatonError(
				'invalid_input',
				`Commit ${ref.sha} is the repository's first commit: it has no parent to compare with.`,
			);
		}
		return { left: parent, right: commit.hash, changes: await repo.diffBetween(parent, commit.hash) };
	}
	let base: string | undefined;
	try {
		base = await repo.getMergeBase('HEAD', ref.name);
	} catch {
		base = undefined;
	}
	if (base === undefined || base === '') {
		throw new BatonError(
			'not_found',
			`Branch ${ref.name} is not in the repository at ${where} (or shares no history with HEAD). Fetch it, or check the card's result.`,
		);
	}
	return { left: base, right: ref.name, changes: await repo.diffBetween('HEAD', ref.name) };
}

/** Opens the changes of `ref` for card `cardId`; returns what was shown. */
export async function openChanges(cardId: string, ref: ChangeRef): Promise<OpenedChanges> {
	const api = await gitApi();
	const repo = await workspaceRepository(api);
	const { left, right, changes } = await changesOf(repo, ref);
	const title = `${cardId}: ${refLabel(ref)}`;
	const files = changes.map(c => vscode.workspace.asRelativePath(c.uri, false));
	if (changes.length === 0) {
		void vscode.window.showInformationMessage(`${title} changes no file.`);
		return { title, files };
	}
	const resources = changes.map((c): [vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined] => [
		c.uri,
		added.has(c.status) ? undefined : api.toGitUri(c.originalUri, left),
		deleted.has(c.status) ? undefined : api.toGitUri(c.uri, right),
	]);
	try {
		await vscode.commands.executeCommand('vscode.changes', title, resources);
	} catch {
		// No multi-file changes editor: a diff editor per file (both sides exist for modified files).
		for (const [uri, l, r] of resources) {
			if (l && r) {
				await vscode.commands.executeCommand(
					'vscode.diff',
					l,
					r,
					`${vscode.workspace.asRelativePath(uri)} (${title})`,
					{ preview: false },
				);
			}
		}
	}
	return { title, files };
}
