/**
 * The one project rule of list, claim and stats: each works in the folder's project
 * and cards with none (outside a repository: only cards with none), and when that hides cards of
 * other projects it says so and how to see or take them (`--project '*'`, `--project ID`). Wording
 * and the one extra stats request only; the narrowing itself is the hub's (card/list, card/claim and
 * card/stats take the same `project`).
 */
import type { Result } from '../../core/protocol';
import type { RpcClient } from '../../core/protocol/rpc';
import { type ProjectChoice, anyProject } from './project';

/** What list and stats send as `project` for the choice: nothing for `*`, null for none. */
export function projectParams(project: ProjectChoice): { project?: string | null } {
	return project === anyProject ? {} : { project };
}

/** The cards a choice covers, as the notes say it. */
export function projectWords(project: ProjectChoice): string {
	return project === null ? 'cards without a project' : `${project} and cards without a project`;
}

/**
 * "12 cards of other projects are not counted (7 claimable): --project '*' for every project, or
 * --project ID"; undefined when the choice hides nothing. `mine` is the narrowed stats.
 */
export async function otherProjectsNote(
	hub: RpcClient,
	project: ProjectChoice,
	mine: Result<'card/stats'>,
	verb: string,
): Promise<string | undefined> {
	if (project === anyProject) {
		return undefined;
	}
	const all = await hub.request('card/stats', {});
	const total = all.total - mine.total;
	if (total <= 0) {
		return undefined;
	}
	const claimable = all.claimable - mine.claimable;
	return (
		`${total} ${total === 1 ? 'card' : 'cards'} of other projects ${total === 1 ? 'is' : 'are'} not ${verb}` +
		`${claimable > 0 ? ` (${claimable} claimable)` : ''}: --project '*' for every project, or --project ID.`
	);
}

/** A claim's reason in CLI words: the hub's "claim with project '*' or project ID" (core/rules/claim.ts) as flags. */
export function cliReason(reason: string): string {
	return reason.replace("claim with project '*' or project ", "baton claim --project '*' or --project ");
}
