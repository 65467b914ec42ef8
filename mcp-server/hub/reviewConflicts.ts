/**
 * After a landing moves a base, the cards still in review on that base are checked: a branch that no
 * longer merges into the new base gets `workspace.conflicts` (the files, the base commit), shown on
 * every face so a person does not approve what would come back, and a branch that merges again loses
 * it. `git merge-tree` answers without touching any worktree. Runs in the background after the landing's
 * record; a failure is logged, never the landing's.
 * A project whose settings say `--on-conflict send-back` gets such a card sent back to ready at once
 * instead, the conflict as its hand-over (event `land_conflicted`, not a failed attempt).
 * Must not: change a card's status otherwise (approval or the next claim resolves the conflict), or run
 * git for a workspace of another host.
 */
import { hostname } from 'node:os';

import type { Backlog } from '../../core/backlog';
import { createLogger, errorText } from '../../core/log';
import type { Card } from '../../core/protocol';
import { git, gitText, splitNul } from '../workspaces/git';

const log = createLogger('hub').child('landing');

/** The files `branch` would conflict in, merged into `base`; [] when it merges cleanly. */
export async function conflictsWithBase(root: string, branch: string, base: string): Promise<string[]> {
	const r = await git(
		root,
		['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', `refs/heads/${base}`, `refs/heads/${branch}`],
		{ okCodes: [1] },
	);
	if (r.code === 0) {
		return [];
	}
	// -z: the tree's oid, then the conflicted paths, each NUL-terminated.
	return [...new Set(splitNul(r.stdout).slice(1))].sort();
}

/**
 * Marks (or clears) the review cards of `base` in the repository at `root` after a landing moved it;
 * `landed` is the card that just landed (its record is being written). Returns how many it marked.
 */
export async function markReviewConflicts(
	backlog: Backlog,
	where: { root: string; base: string; landed: string },
	host: string = hostname(),
): Promise<number> {
	const { root, base } = where;
	let marked = 0;
	const head = await gitText(root, ['rev-parse', `refs/heads/${base}`]);
	for (const card of await backlog.landingQueue.reviewsOn(root, base)) {
		const ws = card.workspace;
		if (ws?.host !== host || card.id === where.landed) {
			continue;
		}
		try {
			const files = await conflictsWithBase(root, ws.branch, base);
			if (files.length > 0 && sameFiles(ws.conflicts?.files, files)) {
				continue;
			}
			if (files.length === 0 && ws.conflicts === undefined) {
				continue;
			}
			if (files.length > 0 && (await sendsBack(backlog, card))) {
				const handoff = `${ws.branch} no longer merges into ${base} after ${where.landed} landed: it conflicts in ${files.join(', ')}. Sent back at once (the project's --on-conflict send-back): the next claim merges ${base} into the branch and leaves the markers to resolve.`;
				// Refused (its check still runs, say): it is marked instead, as a project that marks would.
				const sent = await backlog
					.landConflict({ actor: 'baton' }, { cardId: card.id, approve: true }, 'human', { handoff, files })
					.then(
						() => true,
						(e: unknown) => {
							log.warn(`${card.id}: sending it back for its conflict failed, marking it instead: ${errorText(e)}`);
							return false;
						},
					);
				if (sent) {
					marked++;
					continue;
				}
			}
			// Written only while the card is still in review on this branch and not landed (the store checks).
			const marks = files.length > 0 ? { files, base: head, at: new Date().toISOString() } : null;
			if ((await backlog.landingQueue.markConflicts(card.id, ws.branch, marks)) !== null && marks !== null) {
				marked++;
			}
		} catch (e) {
			log.warn(`${card.id}: checking whether ${ws.branch} still merges into ${base} failed: ${errorText(e)}`);
		}
	}
	return marked;
}

function sameFiles(a: readonly string[] | undefined, b: readonly string[]): boolean {
	return a?.length === b.length && a.every((f, i) => f === b[i]);
}

/** Whether the card's project sends a review card whose branch stopped merging back at once. */
async function sendsBack(backlog: Backlog, card: Card): Promise<boolean> {
	const project = card.project ?? undefined;
	return project !== undefined && (await backlog.projectSettings(project)).onConflict === 'send-back';
}
