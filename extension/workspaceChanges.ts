/**
 * A card's workspace diff in VS Code's multi-file diff editor: the hub's `card/diff` names
 * the files, the merge base and the branch's commit; each side of each file is a `baton-git:` document
 * whose text is `git show <commit>:<path>` in the repository, read by this machine's git (the hub and
 * VS Code share the machine, and a workspace lives on the hub's). So a reviewer sees exactly the
 * commits the hub compared, without the agent naming a ref and without the built-in git extension.
 * Must not: change the repository (it only runs `git show`), or read a workspace of another host (the
 * hub refuses those with a sentence).
 */
import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import { BatonError } from '../core/errors';
import type { CardDiffResult } from '../core/protocol';
import type { HubConnection } from './hubConnection';

export const gitShowScheme = 'baton-git';

export interface OpenedWorkspaceChanges {
	title: string;
	/** Repository-relative paths of the files shown. */
	files: string[];
	/** The commits compared. */
	mergeBase: string;
	head: string;
}

/**
 * A read-only document of one file at one commit: `baton-git:<worktree path>/<file>?root=…&ref=…&file=…`.
 * The uri's path is the file's place in the worktree (so the editor picks the language and the tab
 * names the file); the query says what git shows.
 */
export function gitShowUri(root: string, ref: string, file: string, shownAt: string): vscode.Uri {
	const query = new URLSearchParams({ root, ref, file }).toString();
	return vscode.Uri.file(shownAt).with({ scheme: gitShowScheme, query });
}

/** Serves `baton-git:` documents by running `git show <ref>:<file>` in `root`. */
export class GitShowProvider implements vscode.TextDocumentContentProvider {
	/** How many documents it served (the tests read it). */
	served = 0;

	provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
		const q = new URLSearchParams(uri.query);
		const root = q.get('root') ?? '';
		const ref = q.get('ref') ?? '';
		const file = q.get('file') ?? '';
		this.served++;
		return new Promise(resolve => {
			execFile(
				'git',
				['-C', root, 'show', `${ref}:${file}`],
				{ encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, windowsHide: true },
				(error, stdout, stderr) => {
					if (error !== null) {
						// The editor shows the text: say why there is no content rather than fail silently.
						resolve(
							`(git could not show ${file} at ${ref.slice(0, 12)}: ${stderr.toString('utf8').trim() || error.message})`,
						);
						return;
					}
					resolve(stdout.includes(0) ? `(${file} is a binary file at ${ref.slice(0, 12)})` : stdout.toString('utf8'));
				},
			);
		});
	}
}

/** `card/diff` of the card, opened in the multi-file diff editor (a diff editor per file where it is missing). */
export async function openWorkspaceChanges(hub: HubConnection, cardId: string): Promise<OpenedWorkspaceChanges> {
	const d: CardDiffResult = await hub.request('card/diff', { cardId });
	const title = `${cardId}: ${d.branch} → ${d.base}`;
	const files = d.files.map(f => f.path);
	const result = { title, files, mergeBase: d.mergeBase, head: d.head };
	if (d.files.length === 0) {
		void vscode.window.showInformationMessage(`${d.branch} changes no file since it left ${d.base}.`);
		return result;
	}
	const inWorktree = (file: string) => `${d.path}/${file}`;
	const resources = d.files.map((f): [vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined] => [
		vscode.Uri.file(inWorktree(f.path)),
		f.status === 'added'
			? undefined
			: gitShowUri(d.root, d.mergeBase, f.oldPath ?? f.path, inWorktree(f.oldPath ?? f.path)),
		f.status === 'deleted' ? undefined : gitShowUri(d.root, d.head, f.path, inWorktree(f.path)),
	]);
	try {
		await vscode.commands.executeCommand('vscode.changes', title, resources);
	} catch (e) {
		if (BatonError.is(e)) {
			throw e;
		}
		// No multi-file diff editor: a diff editor per file that has two sides.
		for (const [uri, left, right] of resources) {
			if (left && right) {
				await vscode.commands.executeCommand(
					'vscode.diff',
					left,
					right,
					`${vscode.workspace.asRelativePath(uri)} (${title})`,
					{
						preview: false,
					},
				);
			}
		}
	}
	return result;
}
